/**
 * Stage 1 of a run, open: the source session, then the read-only open (the job with its wallet
 * names resolved and what the job and the destination's tables refuse checked, before anything is
 * written, so a refused job leaves nothing at the destination, not even a lease or a report), then
 * the job's lease and the state of the job at the destination. `plan` opens read-only and stops there.
 */
import type { Job } from '../job/schema.js';
import { jobStreams, type Stream } from '../plan/streams.js';
import { acquireJobLease } from '../state/job-lease.js';
import type { Lease } from '../state/lease.js';
import { refuseFilesBeside } from '../state/unreferenced-files.js';
import { WindowState } from '../state/window-state.js';
import { refuseAtDestination } from './job-refusals.js';
import { refuseAtState } from './state-refusals.js';
import type { RunContext } from './run-context.js';
import type { SourceSession } from './source-session.js';
import { openSource } from './source-session.js';
import { resolveWalletNames } from './targets.js';

/** What the open stage hands the others. */
export interface OpenedRun {
  /** The job with its wallet names resolved. */
  readonly job: Job;
  /** The job's streams, made once (src/plan/streams.ts). */
  readonly streams: readonly Readonly<Stream>[];
  readonly source: SourceSession;
  /** The lease (a dry run and a read-only open hold none). */
  readonly held: Pick<Lease, 'lost' | 'assertHeld'>;
  /** Aborted by the caller's signal or the lease's loss. */
  readonly signal: AbortSignal;
  /** Loaded only for an Iceberg destination (Avro). */
  readonly iceberg: typeof import('../iceberg/index.js') | null;
  readonly state: WindowState;
  /** The command that removes the job's files no state names, as messages give it. */
  readonly remove: string;
}

export async function openRun(ctx: RunContext): Promise<OpenedRun> {
  const { input, run, store, open } = ctx;
  const { config, logger } = input;
  const source = (open.source = await openSource(config, logger));
  if (input.signal) source.client.stopOn(input.signal);
  const onProgress = input.onProgress;
  if (onProgress) source.client.onRequest(() => onProgress({ kind: 'request' }));
  const opened = await openRunReadOnly(ctx, source);
  // One run of a job (or of a shard) at a time, none beside maintenance (src/state/job-lease.ts): nothing is written before the lease is held.
  if (input.dryRun) {
    await store.checkConditionalWrites?.(`_state/${input.job.name}/conditional-write-probe`);
    return opened;
  }
  const held = (open.lease = await acquireJobLease(store, input.job.name, {
    runId: run.runId,
    shard: run.shard,
    ttlMs: input.leaseTtlMs,
    logger,
  }));
  const signal = input.signal ? AbortSignal.any([input.signal, held.lost]) : held.lost;
  const { job, iceberg, remove } = opened;
  const state = (open.state = new WindowState(store, job.name, {
    runId: run.runId,
    guard: () => held.assertHeld(),
    // Files no state names beside a window refuse its commit (src/run/unreferenced-check.ts); an Iceberg table's readers never see them.
    ...(iceberg ? { dropReplaced: iceberg.keepReplacedFiles } : { beforeUpload: refuseFilesBeside(store, job.name, remove) }),
  }));
  return { ...opened, held, signal, state };
}

/**
 * The read-only open (`plan`, `run --dry-run`, and every run before its lease): the job with its
 * wallet names resolved, what the job and the destination's tables refuse (src/run/job-refusals.ts)
 * and what its state there refuses (another format, a changed query: src/run/state-refusals.ts), no lease, and the state read without a run to write it.
 */
export async function openRunReadOnly(ctx: RunContext, source: SourceSession): Promise<OpenedRun> {
  const { input, store } = ctx;
  const job = await resolveWalletNames(input.job, source.client);
  const streams = jobStreams(job);
  const iceberg = input.config.output.format === 'iceberg' ? await import('../iceberg/index.js') : null;
  const tables = await refuseAtDestination(store, job, streams, input.config.output, iceberg);
  const state = new WindowState(store, job.name);
  await refuseAtState(state, job, { streams, tables }, input.config.output, input.force === true);
  const held = noLease();
  const signal = input.signal ? AbortSignal.any([input.signal, held.lost]) : held.lost;
  const remove = input.removeCommand ?? 'insight-export remove-orphan-files <job file>';
  return { job, streams, source, held, signal, iceberg, state, remove };
}

/** A dry run holds no lease: it writes nothing a lease would protect. */
function noLease(): Pick<Lease, 'lost' | 'assertHeld'> {
  return { lost: new AbortController().signal, assertHeld: () => undefined };
}
