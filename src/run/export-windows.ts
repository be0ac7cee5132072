import pLimit from 'p-limit';
import type { Logger } from '../log.js';
import { errorMessage, exitCodeOf } from '../errors.js';
import { failedChainOf } from '../source/errors.js';
import type { Row } from '../columns/columns.js';
import { MAX_LIMIT } from '../source/query.js';
import {
  newPagingStats,
  pageWindow,
  rejectedTotals,
  TARGET_FILL,
  type ChainDone,
  type RecordPage,
  type PagingStats,
} from '../source/paginator.js';
import { PartitionedWriter, type PlannedFile } from '../sink/partitioned-writer.js';
import { fileStem, runIdInNames } from '../sink/file-names.js';
import { contentType } from '../sink/formats.js';
import { windowKey, type Interval } from '../plan/index.js';
import { RunRequestPool } from './request-pool.js';
import { windowBatches, type WindowBatch } from './window-batches.js';
import { commitReceived } from './stop-commit.js';
import { tallyRow, type DecodeTally } from './decode-tally.js';
import { edgeToCommit, pagingLimit, recheckBlocks, rowCheck, windowEdges, type WindowEdges } from './window-proof.js';

import { WindowAbandonedError, type ExportOptions, type ExportWindow, type WindowOutcome } from './export-window.js';

export { WindowAbandonedError, type ExportOptions, type ExportWindow, type ProgressEvent, type WindowOutcome } from './export-window.js';

/**
 * Exports units, several at a time, the consecutive windows of a unit in batches (window-batches.ts).
 * Batches that differ only by chain share their requests (several chain_id per request); each
 * chain still commits on its own.
 */
export async function exportWindows(units: readonly ExportWindow[], opts: ExportOptions): Promise<WindowOutcome[]> {
  const batches = windowBatches(units, opts.batchWindows === true, targetKey);
  const inFlight = Math.max(1, opts.unitsInFlight);
  // A window holds one of the paging slots while it pages; its files are finished and committed
  // outside it, so the next window's requests go out meanwhile (a DuckDB conversion queued behind
  // others takes a few hundred ms). FINISHING_WINDOWS more may be finishing at once.
  const paging = pLimit(inFlight);
  const open = pLimit(inFlight + FINISHING_WINDOWS);
  const outcomes: WindowOutcome[] = [];
  const pool = new RunRequestPool(opts.client.maxInFlight);
  const densities = new Map<string, Map<number, number>>();
  await Promise.all(
    batches.map((batch) =>
      open(async () => {
        const finishing = await paging(async (): Promise<Finishing> => {
          // Rows per axis unit of each chain, carried from window to window of the same target.
          const key = targetKey(batch.units[0]!);
          let density = densities.get(key);
          if (!density) densities.set(key, (density = new Map<number, number>()));
          if (opts.signal?.aborted)
            return {
              outcomes: Promise.resolve(
                batch.units.flatMap((u) => perWindow(outcome(u, 'abandoned', 0, [], 'not started: interrupted'), batch.windows)),
              ),
            };
          return exportGroup(batch, opts, pool, density);
        });
        outcomes.push(...(await finishing.outcomes));
      }),
    ),
  );
  return outcomes;
}

/** Windows that may be finishing their files beside the windows paging (their memory is the writers'). */
const FINISHING_WINDOWS = 2;

/** A window whose pages are all in: its outcomes, once its files are finished and committed. */
interface Finishing {
  outcomes: Promise<WindowOutcome[]>;
}

/** What units of one target (any window, any chain) share. */
function targetKey(u: ExportWindow): string {
  return [u.dataset.name, u.dataset.targetKey(u.target), u.axis, JSON.stringify(u.filters)].join('|');
}

/** The limit sent and the rows aimed at per request, for a page size (rows per request wanted). */
export function sliceSizes(pageSize: number | undefined): { limit: number; target: number } {
  const limit = Math.min(MAX_LIMIT, Math.ceil((pageSize ?? MAX_LIMIT) / TARGET_FILL));
  return { limit, target: Math.min(pageSize ?? MAX_LIMIT, Math.floor(limit * TARGET_FILL)) };
}

function outcome(
  u: ExportWindow,
  status: WindowOutcome['status'],
  rows: number,
  files: PlannedFile[],
  error?: unknown,
  text: string = errorMessage(error),
): WindowOutcome {
  return {
    unitKey: u.unitKey,
    start: u.start,
    end: u.end,
    chainId: u.chainId,
    status,
    rows,
    files: files.length,
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    ...(files.length > 0 ? { written: files.map((f) => ({ key: f.key, rows: f.rows, bytes: f.bytes })) } : {}),
    ...(error === undefined ? {} : { error: text, exitCode: exitCodeOf(error) }),
  };
}

/** What the steps of one window's export share: its units by chain, their writers and outcomes. */
interface WindowExport {
  group: ExportWindow[];
  /** The planned windows the units cover (one, or a batch of them). */
  windows: Interval[];
  /** Rows written per planned window, by chain (batches only). */
  windowRows: Map<number, number[]>;
  opts: ExportOptions;
  log: Logger;
  byChain: Map<number, ExportWindow>;
  writers: Map<number, PartitionedWriter>;
  /** One outcome per planned window, by chain. */
  results: Map<number, WindowOutcome[]>;
  /** Each chain's edge block, read before the rows (window-proof.ts). */
  edges: WindowEdges;
  /** Rows written so far, by chain. */
  rows: Map<number, number>;
  /** By chain: where its rows are proven to, and the axis position of the last row written (src/run/stop-cut.ts). */
  provenTo: Map<number, number>;
  lastWritten: Map<number, number>;
  /** Chains whose files are finishing: all their rows were in. */
  finishing: Set<number>;
  /** Rows written by decode status, by chain (src/run/decode-tally.ts). */
  decodes: Map<number, DecodeTally>;
}

/** What the steps of a batch's export start with. */
function windowExport(batch: WindowBatch, opts: ExportOptions): WindowExport {
  const group = batch.units;
  const first = group[0]!;
  return {
    group,
    windows: batch.windows,
    windowRows: new Map(),
    opts,
    log: opts.logger.child({ unit: first.unitKey, window: windowKey({ start: first.start, end: first.end }) }),
    byChain: new Map(group.map((u) => [u.chainId, u])),
    writers: new Map(),
    results: new Map(),
    edges: new Map(),
    rows: new Map(),
    provenTo: new Map(),
    lastWritten: new Map(),
    finishing: new Set(),
    decodes: new Map(),
  };
}

/**
 * One window of one target on every chain of the group: the rows of every chain come from shared
 * requests, each chain writes its own files and commits on its own.
 */
async function exportGroup(
  batch: WindowBatch,
  opts: ExportOptions,
  pool: RunRequestPool,
  density: Map<number, number>,
): Promise<Finishing> {
  const w = windowExport(batch, opts);
  const group = w.group;
  pool.windows++;
  // Chains whose rows are all in finish while the others page, and after the window's last page.
  const finishing: Promise<void>[] = [];
  let failure: { err: unknown } | undefined;
  const stats = newPagingStats();
  try {
    w.edges = await windowEdges(group, opts.blocks);
    // Whatever the source streams, a window never writes an item_id twice (rowKey, by chain).
    const written = new Map<number, Set<string>>();
    let repeated = 0;
    // A stopping run still takes what is in hand (no request is sent once it stops), until its grace period ends.
    const abandon = opts.abandon ?? opts.signal;
    for await (const batch of windowPages(w, pool, density, stats)) {
      if (abandon?.aborted) throw new WindowAbandonedError('interrupted');
      const u = w.byChain.get(batch.chainId)!;
      if ('done' in batch) {
        written.delete(u.chainId);
        w.finishing.add(u.chainId);
        const finished = finishChain(w, u, batch.warnings);
        // Awaited below; until then a failure must not count as unhandled.
        finished.catch(() => undefined);
        finishing.push(finished);
        continue;
      }
      let keys = written.get(u.chainId);
      if (!keys) written.set(u.chainId, (keys = new Set()));
      const { rows, dropped } = newRows(w, u, batch.records, keys);
      repeated += dropped;
      if (batch.provenTo !== undefined) w.provenTo.set(u.chainId, batch.provenTo);
      if (rows.length === 0) continue;
      w.lastWritten.set(u.chainId, axisPosition(u, batch.records[batch.records.length - 1]));
      await writerFor(w, u).write(rows);
      w.rows.set(u.chainId, (w.rows.get(u.chainId) ?? 0) + rows.length);
      opts.onProgress?.({ kind: 'rows', unitKey: u.unitKey, rows: rows.length });
      // Let I/O callbacks run between pages: the windows' page work otherwise chains in
      // microtasks, and responses wait behind it with their request slots taken.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (repeated + stats.repeated > 0) {
      w.log.warn({ repeatedAcrossSlices: repeated, repeatedInSlice: stats.repeated }, 'the service sent rows twice; dropped');
    }
  } catch (err) {
    failure = { err };
  } finally {
    pool.windows--;
    logRejected(w, stats);
  }
  return {
    outcomes: (async () => {
      // Every finish settles before the unfinished chains fail: a chain whose rows were all in still commits.
      const failed = (await Promise.allSettled(finishing)).find((r) => r.status === 'rejected');
      if (failure || failed) await failUnfinished(w, failure ? failure.err : failed!.reason);
      return group.flatMap((u) => {
        const o = w.results.get(u.chainId)!;
        const rejected = stats.rejected.get(u.chainId);
        // On the window that carries the chain's files: the last.
        if (rejected) o[o.length - 1] = { ...o[o.length - 1]!, rejected };
        return o;
      });
    })(),
  };
}

/** A page's rows not written yet in the window (by their item id's key, per chain and target), mapped to the dataset's rows. */
function newRows(w: WindowExport, u: ExportWindow, records: readonly unknown[], keys: Set<string>): { rows: Row[]; dropped: number } {
  const ds = u.dataset;
  const rows: Row[] = [];
  let dropped = 0;
  for (const r of records) {
    // One chain and target per set: a row's key tells its item_id from the others'.
    const key = ds.rowKey ? ds.rowKey(r) : ds.itemId(r, u.target);
    if (keys.has(key)) {
      dropped++;
      continue;
    }
    keys.add(key);
    const row = ds.toRow(r, u.target);
    rows.push(row);
    tallyRow(w.decodes, u, row, r);
    if (w.windows.length > 1) countInWindow(w, u, r);
  }
  return { rows, dropped };
}

/** Where a record lies on its window's axis. */
function axisPosition(u: ExportWindow, record: unknown): number {
  const p = u.dataset.position(record);
  return u.axis === 'block' ? p.block_number : p.block_timestamp;
}

/** Counts a row written by a batch under the planned window that holds it. */
function countInWindow(w: WindowExport, u: ExportWindow, record: unknown): void {
  const at = axisPosition(u, record);
  let counts = w.windowRows.get(u.chainId);
  if (!counts) w.windowRows.set(u.chainId, (counts = w.windows.map(() => 0)));
  // The last window whose start is at or before the row's position.
  let lo = 0;
  let hi = w.windows.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (w.windows[mid]!.start <= at) lo = mid;
    else hi = mid - 1;
  }
  counts[lo]!++;
}

/**
 * A batch's outcome as one outcome per planned window (the report and the progress count planned
 * windows): each has its rows; the files, the warnings and the interval committed go on the last.
 */
function perWindow(o: WindowOutcome, windows: Interval[], rows?: number[]): WindowOutcome[] {
  if (windows.length === 1) return [o];
  const { written, warnings, decode, ...rest } = o;
  return windows.map((win, i) => {
    const last = i === windows.length - 1;
    return {
      ...rest,
      start: win.start,
      end: win.end,
      rows: rows?.[i] ?? 0,
      files: last ? o.files : 0,
      bytes: last ? o.bytes : 0,
      ...(last && written ? { written, committed: [o.start, o.end] as [number, number] } : {}),
      ...(last && warnings ? { warnings } : {}),
      ...(last && decode ? { decode } : {}),
    };
  });
}

/** One warning per window for the rows the service sent that were not the request's, with the first of them. */
function logRejected(w: WindowExport, stats: PagingStats): void {
  const example = stats.rejectedExample;
  if (!example) return;
  const ds = w.group[0]!.dataset;
  const row = example.row;
  w.log.warn(
    {
      rejected: rejectedTotals(stats),
      example: {
        reason: example.reason,
        itemId: ds.itemId(row, w.group[0]!.target),
        chainId: ds.chainId(row),
        block: ds.position(row).block_number,
      },
    },
    'the service sent rows of another target, chain or slice; dropped',
  );
}

/** The chain's file writer of this window, created with its first rows. */
function writerFor(w: WindowExport, u: ExportWindow): PartitionedWriter {
  let writer = w.writers.get(u.chainId);
  if (!writer) {
    const { opts } = w;
    const ds = u.dataset;
    const table = u.table ?? ds.tableName(u.target);
    writer = new PartitionedWriter({
      output: opts.output,
      stagingDir: opts.stagingDir,
      columns: ds.columns(u.target),
      fieldIds: opts.fieldIds?.get(table),
      fixed: { dataset: table, chain_id: u.chainId, target: ds.targetKey(u.target), job: opts.jobName },
      // An Iceberg snapshot names its files: a window exported again must not overwrite them (src/iceberg/).
      stem: fileStem(ds.targetKey(u.target), windowKey(u), runIdInNames(opts.output.format, opts.runId)),
      dateOf: ds.partitionDate ? (row) => ds.partitionDate!(row) : undefined,
    });
    w.writers.set(u.chainId, writer);
  }
  return writer;
}

/** The window's rows as the dataset collects them: streamed by the source, or paged in slices. */
function windowPages(
  w: WindowExport,
  pool: RunRequestPool,
  density: Map<number, number>,
  stats: PagingStats,
): AsyncIterable<RecordPage<unknown> | ChainDone> {
  const { group, opts } = w;
  const first = group[0]!;
  const ds = first.dataset;
  const sizes = sliceSizes(opts.pageSize);
  const collection = ds.collection;
  if (collection.kind === 'streamed') {
    return collection.streamWindow(opts.client, first.target, {
      chainIds: group.map((u) => u.chainId),
      axis: first.axis,
      start: first.start,
      end: first.end,
      filters: first.filters,
      limit: sizes.limit,
      signal: opts.signal,
    });
  }
  return pageWindow({
    chainIds: group.map((u) => u.chainId),
    start: first.start,
    end: first.end,
    axes: collection.sliceAxes(first.axis),
    baseFilters: first.filters,
    limit: pagingLimit(sizes.limit, group, w.edges),
    target: sizes.target,
    chainsPerRequest: () => opts.client.chainIdsPerRequest,
    prefetch: opts.prefetch ?? Number.POSITIVE_INFINITY,
    pool,
    density,
    stats,
    fetch: (chainIds, filters, held, limit) => {
      if (opts.signal?.aborted) return Promise.reject(new WindowAbandonedError('interrupted'));
      const page = collection.fetchPage(opts.client, first.target, { chainIds, filters, limit, held });
      page.then(
        (rows: unknown[]) => opts.onProgress?.({ kind: 'received', unitKey: first.unitKey, rows: rows.length }),
        () => undefined,
      );
      return page;
    },
    chainId: (r) => ds.chainId(r),
    itemId: (r) => ds.itemId(r, first.target),
    reject: (r) => collection.foreignReason(r, first.target),
    check: rowCheck(group, w.edges, opts.blocks),
    answers: opts.client.answers,
    onBadAnswer: recheckBlocks(group, w.edges, opts.blocks),
    onSplit: (chainId, slice) => w.log.debug({ chainId, slice }, 'slice came back full: split'),
  });
}

/** A chain has all its rows: its files are finished and its window committed, on its own. */
async function finishChain(w: WindowExport, u: ExportWindow, warnings: string[] | undefined): Promise<void> {
  const { opts, log } = w;
  const edge = edgeToCommit(u, w.edges, w.rows.get(u.chainId) ?? 0, opts.blocks);
  const files = await writerFor(w, u).finish();
  const rows = files.reduce((n, f) => n + f.rows, 0);
  try {
    const type = contentType(opts.output.format, opts.output.compression);
    await opts.state.commit(
      { unit_key: u.unitKey, start: u.start, end: u.end, run_id: opts.runId, files: files.map((f) => ({ ...f, contentType: type })), edge },
      { signal: opts.abandon ?? opts.signal },
    );
  } catch (err) {
    // This chain's commit failed (the store, after its retries): the other chains sharing
    // the requests still commit their windows.
    if (err instanceof WindowAbandonedError || (opts.abandon ?? opts.signal)?.aborted) throw err;
    const message = errorMessage(err);
    w.results.set(u.chainId, perWindow(outcome(u, 'failed', 0, [], err), w.windows));
    log.error({ chainId: u.chainId, err: message }, 'unit failed');
    for (const win of w.windows) opts.onProgress?.({ kind: 'unit-failed', unitKey: u.unitKey, ...win, error: message });
    return;
  }
  const decode = w.decodes.get(u.chainId);
  const done = { ...outcome(u, 'done', rows, files), ...(opts.signal?.aborted ? { duringStop: true } : {}), ...(decode ? { decode } : {}) };
  if (warnings?.length) {
    done.warnings = warnings;
    for (const text of warnings) log.warn({ chainId: u.chainId }, text);
  }
  const each = perWindow(done, w.windows, w.windowRows.get(u.chainId));
  w.results.set(u.chainId, each);
  for (const o of each)
    opts.onProgress?.({ kind: 'unit-done', unitKey: u.unitKey, start: o.start, end: o.end, rows: o.rows, files: o.files, bytes: o.bytes });
}

/**
 * The window stopped: every chain not yet finished drops its files and fails (or is abandoned, when
 * the run stops; a stopping run first commits what the chain has wholly received).
 */
async function failUnfinished(w: WindowExport, err: unknown): Promise<void> {
  const { opts, log } = w;
  const abandoned = err instanceof WindowAbandonedError || opts.signal?.aborted === true;
  const message = errorMessage(err);
  for (const u of w.group) {
    if (w.results.has(u.chainId)) continue;
    const edge = w.edges.get(u.chainId);
    // A stop keeps only what may commit with its edge (window-proof.ts): nothing when the service denied it.
    if (opts.signal?.aborted && !w.finishing.has(u.chainId) && edge !== null) {
      const kept = await commitReceived({
        ...{
          unit: u,
          windows: w.windows,
          writer: writerFor(w, u),
          edge: edge && { block_number: edge.block_number, block_hash: edge.block_hash },
          opts,
          log,
        },
        ...{ provenTo: w.provenTo.get(u.chainId), lastWritten: w.lastWritten.get(u.chainId), windowRows: w.windowRows.get(u.chainId) },
        outcome: (status, rows, files) =>
          outcome(u, status, rows, files, status === 'done' ? undefined : new WindowAbandonedError('interrupted')),
      });
      if (kept) {
        w.results.set(u.chainId, kept);
        continue;
      }
    }
    await w.writers
      .get(u.chainId)
      ?.abort()
      .catch(() => undefined);
    // A window's request for several chains failed on one of them: the others were not asked.
    const on = failedChainOf(err);
    const text = on === undefined || on === u.chainId ? message : `not exported: chain ${on} of the same window failed first: ${message}`;
    w.results.set(u.chainId, perWindow(outcome(u, abandoned ? 'abandoned' : 'failed', 0, [], err, text), w.windows));
    if (!abandoned) {
      log.error({ chainId: u.chainId, err: text }, 'unit failed');
      for (const win of w.windows) opts.onProgress?.({ kind: 'unit-failed', unitKey: u.unitKey, ...win, error: text });
    }
  }
}
