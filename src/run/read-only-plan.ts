/**
 * A run's plan made read only, for `plan`: the run's read-only open (src/run/open-run.ts), its
 * state read without a write (readStateReadOnly), then planRun, the one place a run's plan is
 * made. No lease, nothing written; what `plan` prints is the plan the next run makes.
 */
import type { ResolvedConfig } from '../config/index.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import type { InsightClient } from '../source/client.js';
import type { ObjectStore } from '../store/store.js';
import { GracefulStop } from './graceful-stop.js';
import { openRunReadOnly, type OpenedRun } from './open-run.js';
import { readStateReadOnly, type StateRead } from './read-state.js';
import type { RunContext } from './run-context.js';
import { planRun, type RunPlan } from './run-plan.js';
import type { Shard } from './shard.js';
import type { SourceSession } from './source-session.js';

export interface ReadOnlyPlan {
  readonly opened: OpenedRun;
  readonly held: StateRead;
  readonly plan: RunPlan;
}

export async function planReadOnly(input: {
  job: Job;
  config: ResolvedConfig;
  logger: Logger;
  shard: Shard | null;
  store: ObjectStore;
  /** null: a job with no range and no wallet name, which asks the service nothing. */
  source: SourceSession | null;
}): Promise<ReadOnlyPlan> {
  const { job, config, logger, shard, store } = input;
  const stop = new GracefulStop(undefined, config.stopGraceMs, logger);
  const source = input.source ?? noSource();
  const ctx: RunContext = {
    input: { job, config, logger, shard, dryRun: true },
    run: { runId: 'plan', started: Date.now(), shard },
    store,
    stagingDir: '',
    open: { lease: null, source, state: null, claims: [], committed: 0, stop },
  };
  try {
    const opened = await openRunReadOnly(ctx, source);
    const held = await readStateReadOnly(ctx, opened);
    return { opened, held, plan: await planRun(ctx, opened, held) };
  } finally {
    stop.dispose();
  }
}

/** The source of a plan that asks the service nothing (snapshots only, no names): a request would be a defect. */
function noSource(): SourceSession {
  const client = new Proxy({} as InsightClient, {
    get: (_, key) => {
      throw new Error(`a plan without a source asked its client for ${String(key)}`);
    },
  });
  return { client, sandbox: null, close: () => Promise.resolve() };
}
