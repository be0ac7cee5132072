import type { CommandModule } from 'yargs';
import { describeError, ExitCode, InsightExportError, worstExitCode } from '../errors.js';
import { refuseJob } from '../run/job-refusals.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import { checkAtService, unsetForRun } from './validate-names.js';

interface ValidateArgs extends ConfigArgs {
  jobs: string[];
  json: boolean;
  offline: boolean;
}

/** What `validate` found in one job file. */
interface FileVerdict {
  file: string;
  ok: boolean;
  exit_code: number;
  job?: string;
  targets?: number;
  unit_streams?: number;
  warnings: { line: number; column: number; field: string; message: string }[];
  /** Every problem of the file (file:line field: message), with what to do. */
  error?: { message: string; details?: string | undefined; hint?: string | undefined; problems: string[] };
}

/** Checks job files and the configuration they resolve to; contacts the service to resolve wallet names and check chains and contracts (not with --offline). */
export function validateCommand(setExit: (code: number) => void): CommandModule<object, ValidateArgs> {
  return {
    command: 'validate <jobs..>',
    describe: 'Check job files (schema, addresses, signatures, ranges, config): every file, every problem; exit 2 if any is bad',
    builder: (y) =>
      withConfigFlags(y)
        .positional('jobs', { type: 'string', array: true, demandOption: true, describe: 'Job file(s) (YAML or JSON)' })
        .option('json', { type: 'boolean', default: false, describe: 'Print one verdict per file as JSON' })
        .option('offline', {
          type: 'boolean',
          default: false,
          describe: 'Send no request: wallet names, chains and contracts are not checked at the service (a warning names each)',
        })
        .example('$0 validate jobs/*.yaml', 'Check every job file') as never,
    handler: async (args) => {
      const verdicts: FileVerdict[] = [];
      for (const file of args.jobs.map(String)) verdicts.push(await validateFile(file, args));
      if (args.json) process.stdout.write(`${JSON.stringify(verdicts, null, 2)}\n`);
      else {
        for (const v of verdicts) {
          if (v.ok) {
            process.stdout.write(`ok ${v.file}: job ${v.job}, ${v.targets} target(s), ${v.unit_streams} unit stream(s)\n`);
            for (const w of v.warnings) process.stdout.write(`  warning ${v.file}:${w.line}:${w.column} ${w.field}: ${w.message}\n`);
          }
        }
        const bad = verdicts.filter((v) => !v.ok).length;
        if (verdicts.length > 1) process.stdout.write(`${verdicts.length - bad} of ${verdicts.length} job files valid\n`);
      }
      setExit(worstExitCode(verdicts.map((v) => v.exit_code)));
    },
  };
}

/** One file's verdict; its problems are printed on stderr as they are found (without --json). */
async function validateFile(file: string, args: ValidateArgs): Promise<FileVerdict> {
  try {
    const { job, config, logger } = await loadJobContext(file, args, []);
    // What run refuses from the job alone, before any request (src/run/job-refusals.ts).
    await refuseJob(job);
    const nameWarnings = await checkAtService(job, config, logger, args.offline);
    const units = job.targets.reduce((n, t) => n + t.datasets.length * t.chains.length * (t.kind === 'contract' ? t.events.length : 1), 0);
    return {
      file,
      ok: true,
      exit_code: ExitCode.ok,
      job: job.name,
      targets: job.targets.length,
      unit_streams: units,
      warnings: [
        ...job.warnings.map((w) => ({ line: w.line, column: w.column, field: w.field, message: w.message })),
        ...nameWarnings,
        ...unsetForRun(config),
      ],
    };
  } catch (err) {
    const { text, exitCode } = describeError(err);
    if (!args.json) process.stderr.write(`${text.includes(file) ? text : text.replace(/^error: /, `error: ${file}: `)}\n`);
    const e = err instanceof InsightExportError ? err : null;
    return {
      file,
      ok: false,
      exit_code: exitCode,
      warnings: [],
      error: {
        message: e?.shortMessage ?? text,
        details: e?.details,
        hint: e?.hint,
        problems: e?.metaMessages.filter((m) => m !== '') ?? [],
      },
    };
  }
}
