/**
 * `run --repair`: the completed windows whose files are gone, changed (another size, or another
 * SHA-256 than recorded: every file of the windows checked is read) or hold another number of
 * rows than the service counts (verify --quick --content --recount, src/run/recount.ts) are taken out of
 * the completed windows, so the run exports them again through the replacement protocol
 * (src/state/window-state.ts), like `--rewind` does. Windows committed empty by earlier versions
 * before the service had indexed them are found and exported again the same way.
 */
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { InsightClient } from '../source/client.js';
import type { ObjectStore } from '../store/store.js';
import type { OutputFormat } from '../sink/sink.js';
import type { BatchWindows } from '../settings/settings.js';
import { damagedWindows, verifyDestination } from '../state/verify.js';
import { recountWindows } from './recount.js';
import { unreferencedFound, type UnreferencedFound } from './unreferenced-check.js';

export interface RepairInput {
  /** The job with names resolved; its range (after --from/--to) bounds the windows checked. */
  job: Job;
  store: ObjectStore;
  client: InsightClient;
  output: { partitioning: string; format: OutputFormat; batchWindows?: BatchWindows };
  /** Whether this run exports a completed window again when it is damaged (a shard: the windows it owns). */
  owns: (unitKey: string, window: Interval) => boolean;
  /** The command that removes files no state names (named in the log and the report). */
  remove: string;
  logger: Logger;
}

/** The completed intervals without the damaged windows this run owns; logs each one. */
export async function withoutDamagedWindows(
  completed: ReadonlyMap<string, Interval[]>,
  input: RepairInput,
): Promise<{
  completed: Map<string, Interval[]>;
  repaired: { unit: string; window: [number, number] }[];
  /** Data files no state names at the destination (not those of a commit under way): the repair leaves them, naming their removal. */
  unreferenced: UnreferencedFound | null;
}> {
  const { job, store, client, owns, logger } = input;
  const range = job.range;
  const within = range ? { start: range.from, end: range.to === 'latest' ? Infinity : range.to } : undefined;
  const report = await verifyDestination({
    store,
    job,
    quick: true,
    // Every file of the windows checked is read and hashed: a file edited at the same size is damaged too.
    content: true,
    output: input.output,
    ...(within ? { within } : {}),
    recount: (records, files) => recountWindows({ job, records: records.filter((r) => owns(r.unit_key, r)), files, client, store }),
  });
  const damaged = damagedWindows(report.problems).filter((d) => owns(d.unit, { start: d.window[0], end: d.window[1] }));
  const c = report.recount!;
  logger.info(
    { windows: c.windows_checked, requests: c.requests, differ: c.mismatches.length, not_provable: c.not_provable.length },
    'windows recounted against the service',
  );
  const h = report.content;
  logger.info(
    { files: h.hashed, differ: h.differ, no_checksum: h.no_checksum },
    'files of the windows checked read and compared with the SHA-256 recorded at their writing',
  );
  for (const n of c.not_provable) logger.warn({ unit: n.unit, window: n.window, reason: n.reason }, 'window not provable by a recount');
  const out = new Map(completed);
  for (const d of damaged) {
    const why = report.problems.filter((p) => p.unit === d.unit && p.window?.[0] === d.window[0]).map((p) => p.message);
    logger.warn({ unit: d.unit, window: d.window, why: why.join('; ') }, 'exporting a damaged window again');
    out.set(
      d.unit,
      (out.get(d.unit) ?? []).filter((iv) => iv.start !== d.window[0] || iv.end !== d.window[1]),
    );
  }
  // An Iceberg table's older snapshots name files the state no longer does: verify checks those against the table.
  const unreferenced =
    input.output.format === 'iceberg'
      ? null
      : unreferencedFound(
          report.problems.filter((p) => p.kind === 'unreferenced-file' && !p.pending).map((p) => p.key!),
          input.remove,
        );
  if (unreferenced)
    logger.warn(
      { files: unreferenced.files, examples: unreferenced.examples, remove: unreferenced.remove },
      'data files no state names lie at the destination: readers see their rows; a repair does not remove them, the command does',
    );
  return { completed: out, repaired: damaged, unreferenced };
}
