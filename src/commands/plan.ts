import type { CommandModule } from 'yargs';
import { estimateRequests, estimateRun, type Plan, type RunEstimate, type ShardLoad } from '../plan/index.js';
import { type StreamTarget } from '../plan/plan.js';
import { jobStreams } from '../plan/streams.js';
import type { Job, Target } from '../job/schema.js';
import type { TargetKind, StreamTargetOf } from '../datasets/index.js';
import { parseStreamKey } from '../plan/stream-key.js';
import { formatInterval, isoUtc } from '../plan/format-interval.js';
import { openStore } from '../store/open-store.js';
import { openSource } from '../run/source-session.js';
import { noDestination } from '../run/no-destination.js';
import { planReadOnly } from '../run/read-only-plan.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import { resolveShard, shardLabel } from '../run/shard.js';
import { countRequests, pendingSettle, type PendingSettle } from '../run/settle-pending.js';
import { removedStreamsNote } from '../state/removed-streams.js';
import { removedStreamsLines } from './removed-streams-lines.js';

interface PlanArgs extends ConfigArgs {
  job: string;
  json: boolean;
  shard?: string | undefined;
}

/** Prints the windows a run would export and an estimate of its requests, exporting nothing. */
export const planCommand: CommandModule<object, PlanArgs> = {
  command: 'plan <job>',
  describe:
    'Show the windows a run would export (dates in UTC or block numbers; reads state at the destination) and the estimated requests',
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', default: false, describe: 'Print the plan as JSON (full unit keys, unix seconds or blocks)' })
      .option('shard', {
        type: 'string',
        describe:
          'Only the windows of shard i of N (0-based "i/N"; also from the indexed/array job environment), with every shard\'s windows and expected rows',
      })
      .example('$0 plan jobs/demo.yaml', 'What would the demo export now?') as never,
  handler: async (args) => {
    const { job: loaded, config, logger } = await loadJobContext(args.job, args, []);
    const shard = resolveShard(args.shard);
    // Any range needs the service: only its head says how far it has indexed.
    const needsSource = loaded.range != null || loaded.targets.some((t) => t.kind === 'wallet' && t.isName);
    const source = needsSource ? await openSource(config, logger) : null;
    try {
      const destination = config.output.destination;
      const store = destination ? await openStore(destination, { s3: config.s3, logger }) : null;
      // The plan the next run makes, by the run's own stages, read only (src/run/read-only-plan.ts).
      const {
        opened,
        held,
        plan: planned,
      } = await planReadOnly({ job: loaded, config, logger, shard, store: store ?? noDestination(), source });
      const { job, state } = opened;
      const { plan, balance } = planned;
      // The windows of earlier runs not settled: the next run recounts those never recounted (src/run/settle.ts).
      const settle = store
        ? settleSummary(await pendingSettle(job, state, held.completed, planned.ownership.owns), config.source.chainIdsPerRequest)
        : null;
      const estimate = estimateRequests(plan);
      // What planning sent (names, served checks, the head proof): a run sends it again.
      const run = estimateRun(plan, source?.client.stats.requests ?? 0, {
        batched: config.output.batchWindows === 'on',
        chainsPerRequest: config.source.chainIdsPerRequest,
      });
      const label = shard ? shardLabel(shard) : null;
      const removed = store ? await removedStreamsNote(store, job, held.listed) : null;
      const removedLines = removedStreamsLines(removed, args.job).map((l) => `${l}\n`);
      process.stdout.write(
        args.json
          ? `${JSON.stringify({ shard: label, plan, estimate: { ...estimate, run }, ...(balance ? { shards: balance } : {}), ...(settle ? { settle } : {}), ...(removed ? { removed_streams: removed } : {}) }, null, 2)}\n`
          : render(plan, run, label, unitLabels(job, loaded), balance) +
              (settle ? renderSettle(settle, unitLabels(job, loaded)) : '') +
              removedLines.join(''),
      );
    } finally {
      await source?.close();
    }
  },
};

const short = (address: string) => (/^0x[0-9a-f]{40}$/i.test(address) ? `${address.slice(0, 6)}…${address.slice(-4)}` : address);

/** A unit target as a person reads it: the wallet's name as the job file writes it or its short address, the event and short contract; a chain target is its chain. */
const WHO: { [K in TargetKind]: (t: StreamTargetOf<K>, original: Target | undefined) => string } = {
  wallet: (t, original) => (original?.kind === 'wallet' && original.isName ? original.wallet : short(t.wallet)),
  contract: (t) => `${t.event.name} ${short(t.contract)}`,
  chain: () => '',
};

/**
 * A unit key a person can read: dataset, event name, short address (or the wallet's name as the
 * job file writes it), chain, and the query variant when there is one. `--json` keeps the full key.
 */
export function unitLabels(job: Job, named: Job): Map<string, string> {
  const labels = new Map<string, string>();
  for (const spec of jobStreams(job)) {
    const who = (WHO[spec.target.kind] as (t: StreamTarget, original: Target | undefined) => string)(
      spec.target,
      named.targets[spec.target.targetIndex],
    );
    const variant = parseStreamKey(spec.unitKey)!.variant;
    labels.set(spec.unitKey, `${[spec.dataset, who].filter(Boolean).join(' ')}${variant ? ` ~${variant}` : ''} chain ${spec.chainId}`);
  }
  return labels;
}

function render(
  plan: Plan,
  run: RunEstimate,
  shard: string | null,
  labels: Map<string, string>,
  balance: readonly ShardLoad[] | null,
): string {
  const label = (unitKey: string) => labels.get(unitKey) ?? unitKey;
  const lines = [
    `job ${plan.jobName}${shard ? ` (shard ${shard})` : ''}: ${plan.units.length} windows to export, about ${run.total} requests ` +
      `(${run.checks} checking the chains, ${run.edges} for window edges, ${run.pages} first pages; more pages where a window holds over 1,000 rows per chain)`,
  ];
  for (const b of balance ?? [])
    lines.push(
      `  shard ${b.shard}/${balance!.length}: ${b.windows} windows, ${b.expected_rows === null ? 'rows unknown (no completed window of its units to count from)' : `about ${b.expected_rows} rows`}`,
    );
  for (const c of plan.clamped) {
    const at = (n: number) => (plan.axis === 'block' ? `block ${n}` : isoUtc(n));
    lines.push(
      `  chain ${c.chainId}: range.to ${at(c.to)} is past the head minus the safety lag: exported up to ${at(c.end)} (exclusive) now, the rest by later runs`,
    );
  }
  for (const c of plan.coverage) {
    const todo = c.todo.map((i) => formatInterval(c.axis, i)).join(' ') || (c.pending.length > 0 ? 'nothing now' : 'nothing (complete)');
    const pending = c.pending.map((i) => formatInterval(c.axis, i)).join(' ');
    lines.push(
      `  ${label(c.unitKey)}: to export ${todo}; done ${c.done.length} interval(s)` +
        (pending ? `; pending ${pending} (not served yet: exported once the service's head reaches it)` : ''),
    );
  }
  for (const u of plan.units) lines.push(`    ${label(u.unitKey)} ${formatInterval(u.axis, u.window)}`);
  return `${lines.join('\n')}\n`;
}

/** What the next run recounts of the windows of earlier runs not settled (`plan --json`: `settle`). */
interface SettleSummary {
  /** Never recounted since their commit: the next run recounts them. */
  recount: { unit: string; window: [number, number] }[];
  /** Count requests that takes (one per window batch and target for up to source.chain_ids_per_request chains). */
  requests: number;
  /** Recounted equal once within the settle horizon: recounted again by the first run after they are older. */
  recounted_once: number;
}

function settleSummary(p: PendingSettle, chainsPerRequest: number): SettleSummary {
  const next = p.windows.filter((w) => !w.recounted);
  return {
    recount: next.map((w) => ({ unit: w.unit_key, window: [w.start, w.end] })),
    requests: countRequests(next, chainsPerRequest),
    recounted_once: p.windows.length - next.length,
  };
}

function renderSettle(s: SettleSummary, labels: Map<string, string>): string {
  if (s.recount.length + s.recounted_once === 0) return '';
  const lines = [
    `settle: the next run recounts ${s.recount.length} windows of earlier runs (about ${s.requests} count requests); ` +
      `${s.recounted_once} recounted once are recounted again after their block time passes the settle horizon`,
  ];
  for (const w of s.recount) {
    const axis = parseStreamKey(w.unit)!.axis;
    lines.push(`    recount ${labels.get(w.unit) ?? w.unit} ${formatInterval(axis, { start: w.window[0], end: w.window[1] })}`);
  }
  return `${lines.join('\n')}\n`;
}
