import type { Argv } from 'yargs';
import { cliFlags, withSettingFlags } from '../config/flags.js';
import { resolveConfig } from '../config/index.js';
import { UserInputError } from '../errors.js';
import { createLogger } from '../log.js';
import { openSource } from '../run/source-session.js';
import type { InsightClient } from '../source/client.js';
import { HttpStatusError } from '../source/errors.js';

/** Flags of the commands that only read from the service (resolve, decode, nfts); the settings' flags come from the table's "source" group. */
export function withSourceFlags<T>(y: Argv<T>) {
  return withSettingFlags(
    y
      .option('chain', { alias: 'c', type: 'number', array: true, describe: 'Chain id(s) to ask (repeat the flag for several)' })
      .option('json', { type: 'boolean', default: false, describe: 'Print JSON (for scripts) instead of tables' }),
    'source',
  );
}

export type SourceArgs = Record<string, unknown> & {
  chain?: number[] | undefined;
  json: boolean;
  config?: string | undefined;
};

/** A bad command-line argument (exit 2). */
export class CommandArgumentError extends UserInputError {
  override name = 'CommandArgumentError';
}

/** The --chain values, checked; undefined when none were given. */
export function chainIdsOf(args: Pick<SourceArgs, 'chain'>): number[] | undefined {
  const ids = args.chain;
  if (ids === undefined || ids.length === 0) return undefined;
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id <= 0) {
      throw new CommandArgumentError(`--chain takes positive integer chain ids, got ${JSON.stringify(id)}`, {
        hint: 'e.g. --chain 1 --chain 8453',
      });
    }
  }
  return [...new Set(ids)];
}

/**
 * Resolves the configuration (defaults < config file < environment < flags; no job) and runs `fn`
 * with a read-interface client, closing it (and a started sandbox) afterwards.
 */
export async function withClient<T>(args: SourceArgs, fn: (client: InsightClient) => Promise<T>): Promise<T> {
  const config = resolveConfig({ job: null, cliFlags: cliFlags(args), configFile: args.config, require: ['source'] });
  const logger = createLogger({ level: config.logLevel, pretty: config.logFormat === 'pretty' });
  const source = await openSource(config, logger);
  try {
    return await fn(source.client);
  } finally {
    await source.close();
  }
}

/** Writes a command's result: JSON with --json, else the human rendering. */
export function printResult(args: Pick<SourceArgs, 'json'>, value: unknown, human: () => string): void {
  process.stdout.write(args.json ? `${JSON.stringify(value, null, 2)}\n` : human());
}

/** The service refused what the user gave (HTTP 400, or 404 for something that does not exist): exit 2. */
export class InputRejectedError extends UserInputError {
  override name = 'InputRejectedError';
}

/**
 * A 400 (or 404) answer to a command's own argument is bad input, not a failure of the service:
 * it becomes an InputRejectedError naming the argument (exit 2). Anything else is rethrown.
 */
export function rejectedInput(err: unknown, argument: string, hint404?: string): never {
  // A 404 is the input's fault only where the route gives it a meaning (decode: no ABI); elsewhere the
  // server has no such route, which is the base URL's fault (the error's own hint says so).
  if (err instanceof HttpStatusError && (err.status === 400 || (err.status === 404 && hint404 !== undefined))) {
    throw new InputRejectedError(
      `The service rejected ${argument}${err.serverMessage ? `: ${err.serverMessage}` : ` (HTTP ${err.status})`}`,
      {
        details: err.url,
        hint: err.status === 404 ? hint404 : 'Check the argument (see --help for the accepted forms).',
        metaMessages: err.metaMessages,
        cause: err,
      },
    );
  }
  throw err;
}
