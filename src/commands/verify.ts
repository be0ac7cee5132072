import type { CommandModule } from 'yargs';
import { ExitCode } from '../errors.js';
import { openSource } from '../run/source-session.js';
import { resolveWalletNames } from '../run/targets.js';
import { verifyDestination, type VerifyReport } from '../state/verify.js';
import { openStore } from '../store/open-store.js';
import { verifyChainHashes, type ChainHashReport } from '../state/verify-chain-hashes.js';
import { WindowState } from '../state/window-state.js';
import { BlockLookup } from '../source/block-by-number.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface VerifyArgs extends ConfigArgs {
  job: string;
  json: boolean;
  quick: boolean;
  'chain-hashes': boolean;
  'chain-hashes-sample'?: number | undefined;
}

/** Checks the destination against the job and its state; exit 0 only when the export is complete and consistent. */
export function verifyCommand(setExit: (code: number) => void): CommandModule<object, VerifyArgs> {
  return {
    command: 'verify <job>',
    describe:
      'Check the destination against the state: every planned window present, files and row counts as recorded, no gaps or overlaps',
    builder: (y) =>
      withConfigFlags(y)
        .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
        .option('json', { type: 'boolean', default: false, describe: 'Print the verification report as JSON' })
        .option('quick', { type: 'boolean', default: false, describe: 'Check file sizes only; do not read files to count their rows' })
        .option('chain-hashes', {
          type: 'boolean',
          default: false,
          describe:
            "Also ask the service whether each window's recorded edge block is still the chain's (one request per distinct edge of a chain; the rows of a window whose edge changed are bisected to name the first replaced block)",
        })
        .option('chain-hashes-sample', {
          type: 'number',
          describe:
            'With --chain-hashes: also compare this many blocks of rows of every window, spread evenly (default: none beyond the edges)',
        })
        .example('$0 verify jobs/demo.yaml', 'Is ./out a complete export of the demo job?') as never,
    handler: async (args) => {
      const { job: loaded, config, logger } = await loadJobContext(args.job, args, ['destination']);
      // Unit keys hold addresses: names are resolved by the service, as a run does.
      const needsSource = args['chain-hashes'] || loaded.targets.some((t) => t.kind === 'wallet' && t.isName);
      const source = needsSource ? await openSource(config, logger) : null;
      const store = await openStore(config.output.destination!, { s3: config.s3, logger });
      try {
        const job =
          source && loaded.targets.some((t) => t.kind === 'wallet' && t.isName) ? await resolveWalletNames(loaded, source.client) : loaded;
        const report: VerifyReport & { chain_hashes?: ChainHashReport } = await verifyDestination({
          store,
          job,
          quick: args.quick,
          output: config.output,
        });
        if (args['chain-hashes'] && source) {
          const hashes = await verifyChainHashes({
            store,
            state: new WindowState(store, job.name),
            blocks: new BlockLookup(source.client),
            sample: args['chain-hashes-sample'] ?? null,
            concurrency: source.client.maxInFlight,
            onPlan: (p) =>
              logger.info(
                { requests: p.requests, edges: p.edges, chains: p.chains, windows: p.windows, in_flight: source.client.maxInFlight },
                'verify --chain-hashes: requests planned (plus ~log2 of the row blocks of each window whose edge changed)',
              ),
          });
          report.chain_hashes = hashes;
          for (const p of hashes.problems)
            report.problems.push({
              kind: 'chain-hash',
              unit: p.unit,
              window: p.window,
              ...(p.key ? { key: p.key } : {}),
              message: p.message,
            });
          if (hashes.problems.length > 0) report.ok = false;
        }
        process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
        setExit(report.ok ? ExitCode.ok : ExitCode.failed);
      } finally {
        await source?.close();
        await store.close?.();
      }
    },
  };
}

function render(r: VerifyReport & { chain_hashes?: ChainHashReport }): string {
  const lines = [
    `${r.ok ? 'complete' : 'NOT complete'}: job ${r.job} at ${r.destination}`,
    `  windows: ${r.windows.completed} completed, ${r.windows.missing} missing of ${r.windows.planned} planned (${r.units.length} units)`,
    `  files: ${r.files.listed} listed, ${r.files.unreferenced} not listed by any window; rows: ${r.rows.recorded} recorded` +
      (r.rows.counted === null ? ' (not counted: --quick)' : `, ${r.rows.counted} counted in ${r.files.checked_rows} files`),
  ];
  if (r.chain_hashes) {
    const h = r.chain_hashes;
    lines.push(
      `  chain hashes: ${h.requests} requests (${h.requests_planned} planned): ${h.edges_checked} window edges and ${h.row_blocks_checked} blocks of rows ` +
        `(${h.sample ? `${h.sample} per window, and ` : ''}bisected where an edge changed) in ${h.windows_checked} windows`,
    );
  }
  if (r.lease) {
    lines.push(
      r.lease.active
        ? `  a run is in progress: ${r.lease.run_id} on ${r.lease.holder} (lease until ${r.lease.expires_at})`
        : `  last lease: run ${r.lease.run_id} on ${r.lease.holder}, ${r.lease.released ? 'released' : `expired ${r.lease.expires_at}`}`,
    );
  }
  if (r.other_units.length > 0)
    lines.push(
      `  state of ${r.other_units.length} unit(s) the job no longer has (ignored): ${r.other_units.slice(0, 3).join(', ')}${r.other_units.length > 3 ? ' ...' : ''}`,
    );
  for (const p of r.problems) {
    const where = [p.unit, p.window ? `[${p.window[0]}, ${p.window[1]})` : undefined, p.key].filter(Boolean).join(' ');
    lines.push(`  ${p.kind.toUpperCase()} ${where}: ${p.message}`);
  }
  return `${lines.join('\n')}\n`;
}
