/**
 * `verify --chain-hashes`: are the exported windows still the service's chain? Every completed
 * window recorded the hash of the block at its upper edge (WindowRecord.edge), read before its
 * rows; a block's hash commits to every block below it, so an edge that still matches proves every
 * row of its window (src/state/reorg-check.ts reasons the same way). So the cost is what must be
 * proven:
 * - one request per distinct edge block of each chain (windows of several targets share their
 *   edges), sent `concurrency` at a time;
 * - in a window whose edge changed, the rows' blocks are bisected (~log2 of its distinct blocks):
 *   rows below the fork still match, rows above it do not; the window is named with the first
 *   block whose rows are no longer the service's;
 * - in a window exported again (`reexported`: a reorganisation's repair, --force, --rewind) whose
 *   edge matches, the newest block of its rows, bisected when it no longer matches: its rows may
 *   come from an answer of the branch it replaced (a cache from before the reorganisation) under
 *   an edge read fresh. A block's hash commits to every block below it, so the newest block of
 *   rows read from one answer proves them all; rows of several answers may mix branches, which
 *   the sample below looks at;
 * - with `sample`, also that many blocks of rows of every window, spread evenly (rows a service
 *   served with a wrong block hash although the edge matches).
 * The requests are stated before (`requests_planned`: edges, the newest row block of each window
 * exported again that has rows, plus the sample; the bisection adds ~log2 per changed window) and
 * counted after (`requests`).
 */
import pLimit from 'p-limit';
import { isSnapshotStream, parseStreamKey } from '../plan/stream-key.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { ObjectStore } from '../store/store.js';
import type { WindowRecord, WindowState } from './window-state.js';
import { readBlockHashes } from './exported-files.js';

export interface ChainHashProblem {
  unit: string;
  window: [number, number];
  key?: string;
  message: string;
}

export interface ChainHashReport {
  windows_checked: number;
  edges_checked: number;
  /** Distinct blocks of rows compared with the service (bisected in windows whose edge changed, and the sample). */
  row_blocks_checked: number;
  /** Files whose rows could not be read (verify names them as missing or unreadable). */
  files_unreadable: number;
  sample: number | null;
  /** Requests stated before asking: distinct edge blocks per chain, plus the sample's blocks. */
  requests_planned: number;
  /** Requests sent (distinct blocks asked), bisection included. */
  requests: number;
  problems: ChainHashProblem[];
}

/** Windows whose files are read at once (each may stream a Parquet file to a temporary copy). */
const WINDOWS_READ_AT_ONCE = 4;

interface Windowed {
  rec: WindowRecord;
  chainId: number;
  window: [number, number];
}

export async function verifyChainHashes(opts: {
  store: ObjectStore;
  state: WindowState;
  blocks: BlockLookup;
  sample?: number | null;
  /** Requests in flight at once (the source's limit). */
  concurrency?: number;
  /** Told the requests planned before any is sent. */
  onPlan?: (plan: { requests: number; edges: number; chains: number; windows: number }) => void;
}): Promise<ChainHashReport> {
  const sample = opts.sample ?? null;
  const report: ChainHashReport = {
    windows_checked: 0,
    edges_checked: 0,
    row_blocks_checked: 0,
    files_unreadable: 0,
    sample,
    requests_planned: 0,
    requests: 0,
    problems: [],
  };
  const windows: Windowed[] = [];
  for await (const rec of opts.state.completedRecords()) {
    const unit = parseStreamKey(rec.unit_key);
    if (!unit || isSnapshotStream(unit)) continue;
    windows.push({ rec, chainId: unit.chainId, window: [rec.start, rec.end] });
  }
  report.windows_checked = windows.length;
  const edgeBlocks = new Set(windows.flatMap((w) => (w.rec.edge ? [`${w.chainId}:${w.rec.edge.block_number}`] : [])));
  const again = windows.filter((w) => w.rec.reexported && w.rec.edge && w.rec.rows > 0).length;
  report.requests_planned = edgeBlocks.size + again + (sample ? sample * windows.length : 0);
  opts.onPlan?.({
    requests: report.requests_planned,
    edges: edgeBlocks.size,
    chains: new Set(windows.map((w) => w.chainId)).size,
    windows: windows.length,
  });

  const limit = pLimit(Math.max(1, opts.concurrency ?? 1));
  const asked = new Set<string>();
  const hashOf = (chainId: number, n: number) =>
    limit(async () => {
      asked.add(`${chainId}:${n}`);
      return (await opts.blocks.block(chainId, n))?.block_hash ?? null;
    });

  const changed = new Set<Windowed>();
  await Promise.all(
    windows.map(async (w) => {
      const edge = w.rec.edge;
      if (!edge) return;
      report.edges_checked++;
      const now = await hashOf(w.chainId, edge.block_number);
      if (now === edge.block_hash) return;
      changed.add(w);
      report.problems.push({
        unit: w.rec.unit_key,
        window: w.window,
        message: `edge block ${edge.block_number} was ${edge.block_hash}, the service now has ${now ?? 'no such block'}`,
      });
    }),
  );
  // Rows are read only where something is to be proven: windows whose edge changed (or has none),
  // windows exported again (their newest row block), and every window with a sample.
  const toRead = windows.filter((w) => changed.has(w) || !w.rec.edge || w.rec.reexported || sample);
  const reading = pLimit(WINDOWS_READ_AT_ONCE);
  await Promise.all(
    toRead.map((w) => {
      const bisect = changed.has(w) || !w.rec.edge ? 'always' : w.rec.reexported ? 'newest-stale' : 'never';
      return reading(() => checkRows(w, bisect, sample, report, hashOf, opts.store));
    }),
  );
  report.problems.sort((a, b) => a.unit.localeCompare(b.unit) || a.window[0] - b.window[0]);
  report.requests = asked.size;
  return report;
}

/**
 * The blocks of a window's rows against the service: bisected (`bisect`: always, or when the
 * newest block of its rows no longer matches), and/or a sample spread evenly.
 */
async function checkRows(
  w: Windowed,
  bisect: 'always' | 'newest-stale' | 'never',
  sample: number | null,
  report: ChainHashReport,
  hashOf: (chainId: number, n: number) => Promise<string | null>,
  store: ObjectStore,
): Promise<void> {
  const rows = await readBlockHashes(
    store,
    w.rec.files.map((f) => f.key),
  );
  report.files_unreadable += rows.unreadable.length;
  for (const c of rows.conflicts) {
    report.problems.push({
      unit: w.rec.unit_key,
      window: w.window,
      key: c.key,
      message: `rows of block ${c.block} carry two hashes: ${c.hashes[0]} and ${c.hashes[1]}`,
    });
  }
  const blocks = [...rows.hashes.keys()].sort((a, b) => a - b);
  const checked = new Set<number>();
  const wrong = new Map<number, string | null>();
  const matches = async (n: number): Promise<boolean> => {
    const now = await hashOf(w.chainId, n);
    if (!checked.has(n)) report.row_blocks_checked++;
    checked.add(n);
    if (now === rows.hashes.get(n)!.hash) return true;
    wrong.set(n, now);
    return false;
  };
  let firstStale: number | null = null;
  if (bisect === 'always' || (bisect === 'newest-stale' && blocks.length > 0 && !(await matches(blocks.at(-1)!)))) {
    // Rows below the fork still match, rows above it do not: the first that does not.
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (await matches(blocks[mid]!)) lo = mid + 1;
      else hi = mid;
    }
    if (lo < blocks.length) firstStale = lo;
  }
  if (sample && blocks.length > 0) {
    const step = blocks.length / Math.min(sample, blocks.length);
    const picked = Array.from({ length: Math.min(sample, blocks.length) }, (_, i) => blocks[Math.floor(i * step)]!);
    await Promise.all(picked.map((n) => matches(n)));
  }
  const stale = new Set([...(firstStale === null ? [] : blocks.slice(firstStale)), ...wrong.keys()]);
  if (stale.size === 0) return;
  const shown = [...wrong].sort((a, b) => a[0] - b[0]).slice(0, 3);
  report.problems.push({
    unit: w.rec.unit_key,
    window: w.window,
    message:
      `${stale.size} block(s) of its rows are no longer the service's` +
      (firstStale === null ? '' : ` (from block ${blocks[firstStale]} on, bisected)`) +
      `: ${shown.map(([n, now]) => `block ${n}: rows have ${rows.hashes.get(n)!.hash}, the service ${now ?? 'no such block'} (${rows.hashes.get(n)!.key})`).join('; ')}` +
      (stale.size > shown.length ? ' ...' : ''),
  });
}
