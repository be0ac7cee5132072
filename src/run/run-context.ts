/**
 * What every stage of a run is handed (src/run/run-job.ts): the caller's input, the run's identity,
 * its open destination and staging folder, and what it opened (closed by runJob whatever happens).
 */
import type { ResolvedConfig } from '../config/index.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import type { Plan } from '../plan/index.js';
import type { Lease } from '../state/lease.js';
import type { Rewind } from '../state/rewind.js';
import type { WindowState } from '../state/window-state.js';
import type { ObjectStore } from '../store/store.js';
import type { ProgressEvent } from './export-windows.js';
import type { GracefulStop } from './graceful-stop.js';
import type { Shard } from './shard.js';
import type { SourceSession } from './source-session.js';

export interface RunJobInput {
  job: Job;
  config: ResolvedConfig;
  logger: Logger;
  /** Re-export every window of the range, replacing files, even those state marks done. */
  force?: boolean;
  /**
   * Stops the run (SIGINT, SIGTERM): no new request; what is wholly received is committed within
   * config.stopGraceMs, the rest abandoned (src/run/graceful-stop.ts). The report says "interrupted".
   */
  signal?: AbortSignal;
  onProgress?(event: ProgressEvent): void;
  onPlan?(plan: Plan): void;
  /** Export only this shard's windows (each unit's windows divided between the shards; see src/run/shard.ts). */
  shard?: Shard | null;
  /** Export the most recent windows of every unit again, replacing their files (reorganisations). */
  rewind?: Rewind | null;
  /** Export again the completed windows whose files are gone, changed, or short of the service's count (src/run/repair.ts). */
  repair?: boolean;
  /** The command that removes the job's files no state names, as this run's messages give it (default: with `<job file>`). */
  removeCommand?: string;
  /** How long the job's lease lasts without renewal (default 120 s; see src/state/lease.ts). */
  leaseTtlMs?: number;
  /** Rows per page per chain (default 1000, the service's maximum); bench/ uses small pages. */
  pageSize?: number;
  /** Pages requested ahead per window (see ExportOptions.prefetch). */
  prefetch?: number;
  /**
   * Check and plan everything a run would (job, config, destination reachability, ownership and
   * format, chains and contracts served) and stop before the first write: no lease, no claim, no
   * file, no state. The report has `dry_run: true`, no window done, and `onPlan` has the plan.
   */
  dryRun?: boolean;
  /**
   * Commit the Iceberg tables during and at the end of the run (default true). False for the workers
   * of `run --workers`: their parent commits once all of them have ended.
   */
  commitTables?: boolean;
}

export interface RunIdentity {
  runId: string;
  started: number;
  shard: Shard | null;
}

/** What the run opened, closed by runJob whatever happens. */
export interface OpenedResources {
  lease: Lease | null;
  source: SourceSession | null;
  state: WindowState | null;
  /** Claims this run wrote (see claimPartitions); withdrawn when the run ends having exported nothing. */
  claims: string[];
  /** Windows this run committed. */
  committed: number;
  stop: GracefulStop;
}

/** Handed to every stage of a run. */
export interface RunContext {
  input: RunJobInput;
  run: RunIdentity;
  store: ObjectStore;
  stagingDir: string;
  open: OpenedResources;
}

/** The "latest report" object of a run: one per shard when sharded. */
export const lastRunName = (shard: Shard | null) => (shard ? `last-run-shard-${shard.index}-of-${shard.count}.json` : undefined);
