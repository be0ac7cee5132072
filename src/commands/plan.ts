import type { CommandModule } from 'yargs';
import { estimateRequests, fixedToMayPassHead, planJob, type Interval, type Plan } from '../plan/index.js';
import { openStore } from '../store/open-store.js';
import { WindowState } from '../state/window-state.js';
import { openSource } from '../run/source-session.js';
import { ChainChecks, headFinder } from '../run/chains.js';
import { readKnownHeads } from '../state/chain-heads.js';
import { resolveWalletNames } from '../run/targets.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import { planForShard, resolveShard, shardLabel } from '../run/shard.js';

interface PlanArgs extends ConfigArgs {
  job: string;
  json: boolean;
  shard?: string | undefined;
}

/** Prints the work units a run would export and an estimate of its requests, exporting nothing. */
export const planCommand: CommandModule<object, PlanArgs> = {
  command: 'plan <job>',
  describe: 'Show the windows a run would export (reads state at the destination) and the estimated requests',
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', default: false, describe: 'Print the plan as JSON' })
      .option('shard', {
        type: 'string',
        describe: 'Only the units of shard i of N (0-based "i/N"; also from the indexed/array job environment)',
      })
      .example('$0 plan jobs/demo.yaml', 'What would the demo export now?') as never,
  handler: async (args) => {
    const { job: loaded, config, logger } = await loadJobContext(args.job, args, []);
    const shard = resolveShard(args.shard);
    const range = loaded.range;
    const needsSource =
      range?.to === 'latest' ||
      (range != null && fixedToMayPassHead(range, Date.now() / 1000)) ||
      loaded.targets.some((t) => t.kind === 'wallet' && t.isName);
    const source = needsSource ? await openSource(config, logger) : null;
    try {
      const job = source ? await resolveWalletNames(loaded, source.client) : loaded;
      const store = config.output.destination ? await openStore(config.output.destination, { s3: config.s3, logger }) : null;
      const completed = store ? await new WindowState(store, job.name).completedIntervals() : new Map<string, Interval[]>();
      const known = store ? await readKnownHeads(store, job.name) : {};
      const plan = planForShard(
        await planJob(job, {
          completed: (k) => completed.get(k) ?? [],
          latest: source ? headFinder(new ChainChecks(job, source.client, known)) : undefined,
        }),
        shard,
      );
      const estimate = estimateRequests(plan);
      const label = shard ? shardLabel(shard) : null;
      process.stdout.write(
        args.json ? `${JSON.stringify({ shard: label, plan, estimate }, null, 2)}\n` : render(plan, estimate.minimum, label),
      );
    } finally {
      await source?.close();
    }
  },
};

function render(plan: Plan, minimumRequests: number, shard: string | null): string {
  const lines = [
    `job ${plan.jobName}${shard ? ` (shard ${shard})` : ''}: ${plan.units.length} windows to export, at least ${minimumRequests} requests`,
  ];
  for (const c of plan.clamped) {
    lines.push(
      `  chain ${c.chainId}: range.to ${c.to} is past the head minus the safety lag: exported up to ${c.end} (exclusive) now, the rest by later runs`,
    );
  }
  for (const c of plan.coverage) {
    const todo = c.todo.map((i) => `[${i.start}, ${i.end})`).join(' ') || 'nothing (complete)';
    lines.push(`  ${c.unitKey}: to export ${todo}; done ${c.done.length} interval(s)`);
  }
  for (const u of plan.units) lines.push(`    ${u.unitKey} ${u.windowKey}`);
  return `${lines.join('\n')}\n`;
}
