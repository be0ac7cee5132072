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
      // yargs' own validation (a flag given without its value) fails with a YError: bad input, not a bug.
      if (err && err.name !== 'YError') throw err;
      msg = msg ?? err?.message ?? '';
      const unknown = unknownFlags(msg, parser);
      throw new UserInputError(unknown?.message ?? msg, {
        hint: unknown?.hint ?? 'Run insight-export --help for the commands and their options.',
      });
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
 * yargs' strict mode names an unknown flag (and its camelCase copy) but, unlike a command, suggests
 * nothing: the flags as typed, and the known flag nearest each (`--destinaton` -> `--destination`).
 */
function unknownFlags(msg: string, parser: object): { message: string; hint: string | undefined } | undefined {
  const m = /^Unknown arguments?: (.+)$/.exec(msg);
  if (!m) return undefined;
  const camel = (k: string) => k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const listed = m[1]!.split(', ');
  const typed = listed.filter((k) => !listed.some((other) => other !== k && camel(other) === k));
  const options = (parser as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
  const known = [...new Set([...Object.keys(options.key), ...Object.values(options.alias).flat()])].filter(
    (k) => k.length > 1 && !/[A-Z]/.test(k),
  );
  const suggestions = typed.flatMap((unknown) => {
    const near = nearest(unknown, known);
    return near === undefined ? [] : [`--${unknown}: did you mean --${near}?`];
  });
  return {
    message: `Unknown argument${typed.length === 1 ? '' : 's'}: ${typed.join(', ')}`,
    hint: suggestions.length > 0 ? `${suggestions.join(' ')} (insight-export <command> --help lists its options)` : undefined,
  };
}

/** The candidate nearest `word` by edit distance, if within a third of its length (at least 1, at most 3). */
function nearest(word: string, candidates: string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: { word: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d <= limit && (!best || d < best.d)) best = { word: c, d };
  }
  return best?.word;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
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
