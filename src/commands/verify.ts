import type { CommandModule } from 'yargs';
import { ExitCode } from '../errors.js';
import { openSource } from '../run/source-session.js';
import { resolveWalletNames } from '../run/targets.js';
import { verifyDestination, type VerifyReport } from '../state/verify.js';
import { openStore } from '../store/open-store.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface VerifyArgs extends ConfigArgs {
  job: string;
  json: boolean;
  quick: boolean;
}

/** Checks the destination against the job and its state; exit 0 only when the export is complete and consistent. */
export function verifyCommand(setExit: (code: number) => void): CommandModule<object, VerifyArgs> {
  return {
    command: 'verify <job>',
    describe: 'Check the destination against the state: every planned window present, files and row counts as recorded, no gaps or overlaps',
    builder: (y) =>
      withConfigFlags(y)
        .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
        .option('json', { type: 'boolean', default: false, describe: 'Print the verification report as JSON' })
        .option('quick', { type: 'boolean', default: false, describe: 'Check file sizes only; do not read files to count their rows' })
        .example('$0 verify jobs/demo.yaml', 'Is ./out a complete export of the demo job?') as never,
    handler: async (args) => {
      const { job: loaded, config, logger } = await loadJobContext(args.job, args, ['destination']);
      // Unit keys hold addresses: names are resolved by the service, as a run does.
      const source = loaded.targets.some((t) => t.kind === 'wallet' && t.isName) ? await openSource(config, logger) : null;
      const store = openStore(config.output.destination!, { s3: config.s3, logger });
      try {
        const job = source ? await resolveWalletNames(loaded, source.client) : loaded;
        const report = await verifyDestination({ store, job, quick: args.quick });
        process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
        setExit(report.ok ? ExitCode.ok : ExitCode.failed);
      } finally {
        await source?.close();
        await store.close?.();
      }
    },
  };
}

function render(r: VerifyReport): string {
  const lines = [
    `${r.ok ? 'complete' : 'NOT complete'}: job ${r.job} at ${r.destination}`,
    `  windows: ${r.windows.completed} completed, ${r.windows.missing} missing of ${r.windows.planned} planned (${r.units.length} units)`,
    `  files: ${r.files.listed} listed, ${r.files.unreferenced} not listed by any window; rows: ${r.rows.recorded} recorded` +
      (r.rows.counted === null ? ' (not counted: --quick)' : `, ${r.rows.counted} counted in ${r.files.checked_rows} files`),
  ];
  if (r.lease) {
    lines.push(
      r.lease.active
        ? `  a run is in progress: ${r.lease.run_id} on ${r.lease.holder} (lease until ${r.lease.expires_at})`
        : `  last lease: run ${r.lease.run_id} on ${r.lease.holder}, ${r.lease.released ? 'released' : `expired ${r.lease.expires_at}`}`,
    );
  }
  if (r.other_units.length > 0) lines.push(`  state of ${r.other_units.length} unit(s) the job no longer has (ignored): ${r.other_units.slice(0, 3).join(', ')}${r.other_units.length > 3 ? ' ...' : ''}`);
  for (const p of r.problems) {
    const where = [p.unit, p.window ? `[${p.window[0]}, ${p.window[1]})` : undefined, p.key].filter(Boolean).join(' ');
    lines.push(`  ${p.kind.toUpperCase()} ${where}: ${p.message}`);
  }
  return `${lines.join('\n')}\n`;
}
