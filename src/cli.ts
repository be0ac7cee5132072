#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { describeError, ExitCode, UserInputError } from './errors.js';
import { ownPackage } from './package-root.js';

/**
 * Entry point: parses flags, runs one command, maps errors to exit codes.
 * Typed errors print their own message (what, where, what to do); anything else is a bug and
 * prints its stack.
 */
export async function main(argv: string[]): Promise<number> {
  // A health check or a script asking the version should not wait for every command to load.
  if (argv.length === 1 && argv[0] === '--version') {
    process.stdout.write(`${packageVersion()}\n`);
    return ExitCode.ok;
  }
  const [{ default: yargs }, { commands }] = await Promise.all([import('yargs'), import('./commands/index.js')]);
  // The AWS SDK warns on every run that it will need Node 22 in a future release; we support Node
  // >= 20 and say so in package.json, so the notice is noise in a cron job's log.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  let exitCode: number = ExitCode.ok;
  const parser = yargs(argv)
    .scriptName('insight-export')
    .usage('$0 <command> [options]')
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- the commands' mixed argument types (see commands())
    .command(await commands((code: number) => (exitCode = code), argv))
    .demandCommand(1, 'Name a command: run, plan, validate, sandbox ... (see --help)')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(packageVersion())
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((msg, err) => {
      throw err ?? new UserInputError(msg, { hint: 'Run insight-export --help for the commands and their options.' });
    });
  parser.middleware((args) => refuseRepeatedFlags(args, parser));
  skipHelpLayoutBeforeHandlers(parser);
  try {
    await parser.parseAsync();
    return exitCode;
  } catch (err) {
    return reportError(err);
  }
}

/**
 * yargs lays out a command's whole help text before running its handler, so that the handler could
 * show it later; ours never do (a failure throws through `.fail`, and `--help` is answered before
 * any handler). For `run` and its ~60 options that layout is ~0.1 s of every cron run's start.
 */
function skipHelpLayoutBeforeHandlers(parser: object): void {
  const internal = (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } })
    .getInternalMethods?.()
    .getUsageInstance?.();
  if (internal?.cacheHelpMessage) internal.cacheHelpMessage = () => undefined;
}

function packageVersion(): string {
  return ownPackage()?.version ?? 'unknown';
}

export function reportError(err: unknown): number {
  const { text, exitCode } = describeError(err);
  process.stderr.write(`${text}\n`);
  return exitCode;
}

// Through a bin symlink (npx insight-export, npm i -g, the container's PATH) argv[1] is the link's path.
const entryPath = (p: string | undefined) => {
  try {
    return p === undefined ? '' : realpathSync(p);
  } catch {
    return p ?? '';
  }
};
const isEntry = /cli\.(ts|js)$/.test(entryPath(process.argv[1]));
if (isEntry) {
  // `insight-export ... | head`: the reader has all it wants; stop quietly like other Unix tools.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.ok);
    throw err;
  });
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.exitCode = reportError(err);
    },
  );
}

/**
 * A flag that takes one value, given more than once: yargs makes an array of it, which no handler
 * expects (a `.trim()` on it was an internal error). Refused before any handler runs, naming the
 * flag; flags declared `array` (`--chain 1 --chain 8453`) repeat as documented.
 */
function refuseRepeatedFlags(argv: Record<string, unknown>, parser: object): void {
  // yargs' getOptions() is not in its typings: the options as declared, with their aliases.
  const options = (parser as { getOptions(): { array: string[]; alias: Record<string, string[]> } }).getOptions();
  const repeatable = new Set(options.array.flatMap((key) => [key, ...(options.alias[key] ?? [])]));
  for (const [key, value] of Object.entries(argv)) {
    // Every flag is declared in kebab case; yargs adds a camelCase copy of each, skipped here.
    if (key === '_' || key === '$0' || /[A-Z]/.test(key) || !Array.isArray(value) || repeatable.has(key)) continue;
    throw new UserInputError(`--${key} is given ${value.length} times: it takes one value`, {
      details: `values: ${value.map((v) => JSON.stringify(v)).join(', ')}`,
      hint: 'Give the flag once.',
    });
  }
}
