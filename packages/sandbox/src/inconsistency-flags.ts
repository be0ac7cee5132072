import type { Argv } from 'yargs';
import { SandboxOptionsError } from './errors.js';
import type { InconsistencyOptions } from './inconsistencies.js';

/** The flags of the inconsistencies (src/sandbox/inconsistencies.ts); each unset unless given, so a profile's value stands. */
export interface InconsistencyArgs {
  'replica-lag'?: number | undefined;
  'replica-lag-until'?: string | undefined;
  'replica-lag-behind'?: number | undefined;
  'stale-cache'?: number | undefined;
  'empty-answers'?: number | undefined;
  'millisecond-timestamps'?: number | undefined;
  'neighbour-slices'?: number | undefined;
  'consistent-after-requests'?: number | undefined;
}

/** Adds the inconsistency flags to the sandbox command. */
export function inconsistencyFlags<T>(y: Argv<T>): Argv<T> {
  return y
    .option('replica-lag', {
      type: 'number',
      describe: 'Rate (0..1) of requests (rows, counts, resolve) answered by a lagging replica behind the same port',
    })
    .option('replica-lag-until', {
      type: 'string',
      describe: "The lagging replica's index reaches this block time (ISO 8601 or unix seconds)",
    })
    .option('replica-lag-behind', {
      type: 'number',
      describe: 'Or: the lagging replica is this many seconds behind the newest block served (default 86400)',
    })
    .option('stale-cache', {
      type: 'number',
      describe: 'Rate (0..1) of list and resolve requests served the body their URL got before the latest reorganisation (a CDN)',
    })
    .option('empty-answers', { type: 'number', describe: 'Rate (0..1) of row answers with rows sent as HTTP 200 with data: []' })
    .option('millisecond-timestamps', { type: 'number', describe: 'Rate (0..1) of row answers with block_timestamp in milliseconds' })
    .option('neighbour-slices', {
      type: 'number',
      describe: 'Rate (0..1) of row requests answered for the same-width block (or time) range just below or above',
    })
    .option('consistent-after-requests', {
      type: 'number',
      describe: 'After this many requests these inconsistencies stop (also: POST /_sandbox/consistent)',
    })
    .group(
      [
        'replica-lag',
        'replica-lag-until',
        'replica-lag-behind',
        'stale-cache',
        'empty-answers',
        'millisecond-timestamps',
        'neighbour-slices',
        'cut-full-pages',
        'consistent-after-requests',
      ],
      'A service answering inconsistently for a while:',
    );
}

/** The inconsistency flags given, as options (the ones not given undefined). */
export function inconsistencyOptionsFromArgs(args: InconsistencyArgs): InconsistencyOptions {
  const until = args['replica-lag-until'];
  return {
    replicaLag: args['replica-lag'],
    replicaLagUntil: until === undefined ? undefined : blockTime(until, '--replica-lag-until'),
    replicaLagBehindSeconds: args['replica-lag-behind'],
    staleCache: args['stale-cache'],
    emptyAnswers: args['empty-answers'],
    millisecondTimestamps: args['millisecond-timestamps'],
    neighbourSlices: args['neighbour-slices'],
    consistentAfterRequests: args['consistent-after-requests'],
  };
}

/** A block time given as unix seconds or an ISO 8601 date. */
export function blockTime(text: string, flag: string): number {
  const t = /^\d+$/.test(text.trim()) ? Number(text) : Date.parse(text) / 1000;
  if (!Number.isSafeInteger(t)) {
    throw new SandboxOptionsError(`${flag} must be a block time`, {
      details: `got ${JSON.stringify(text)}`,
      hint: 'unix seconds or an ISO 8601 date, e.g. 2024-02-01T00:00:00Z',
    });
  }
  return t;
}
