import type { Argv, CommandModule } from 'yargs';
import { SandboxOptionsError } from './errors.js';
import { sandboxBanner } from './banner.js';
import { SANDBOX_PROFILE_NAMES, type SandboxProfile } from './profiles.js';
import { startSandbox, type FaultKind, type FaultOptions, type Sandbox, type SandboxOptions } from './server.js';
import { rpcOptionsFromArgs, runRpcSandbox, type RpcSandboxArgs } from './rpc/command.js';
import { serveUntilSignalled } from './serve-until-signalled.js';
import { blockTime, inconsistencyFlags, inconsistencyOptionsFromArgs, type InconsistencyArgs } from './inconsistency-flags.js';
import { catalogFlags, catalogOptionsFromArgs, type CatalogArgs } from './catalog/catalog-flags.js';

export interface SandboxArgs extends RpcSandboxArgs, InconsistencyArgs, CatalogArgs {
  port: number;
  host: string;
  transactions: number;
  seed: number;
  'latency-ms': number;
  'jitter-ms': number;
  rps?: number | undefined;
  'retry-after'?: number | undefined;
  'fault-500': number;
  'fault-502': number;
  'fault-503': number;
  'fault-429': number;
  'fault-reset': number;
  'fault-truncate': number;
  'fault-stall': number;
  'stall-ms': number;
  'fault-html'?: boolean;
  'fault-seed': number;
  'path-prefix': string;
  'explorer-prefix': string;
  'nft-page-size': number;
  'duplicate-self-transfers': boolean;
  'legacy-types': boolean;
  'decoded-variants': boolean;
  profile?: SandboxProfile | undefined;
  'wallet-union'?: boolean | undefined;
  'unstable-order'?: boolean | undefined;
  'indexer-limits'?: boolean | undefined;
  'max-chain-ids'?: number | undefined;
  'repeat-earlier-rows'?: number | undefined;
  'foreign-rows'?: number | undefined;
  'ok-error-body'?: number | undefined;
  'ok-without-data'?: number | undefined;
  'cut-full-pages'?: number | undefined;
  'go-values'?: boolean | undefined;
  'go-aggregations'?: boolean | undefined;
  'rich-contract'?: boolean | undefined;
  'extra-chains'?: number | undefined;
  'indexed-until'?: string | undefined;
  compress?: boolean | undefined;
  'nft-instance-limit'?: number | undefined;
  'nft-distinct-amount'?: boolean | undefined;
  'nft-checksummed'?: boolean | undefined;
  'nft-token-keys'?: 'old' | 'both' | 'new' | undefined;
  'nft-type-order'?: boolean | undefined;
  'nft-echo-page-params'?: boolean | undefined;
  'nft-ungrouped-route'?: boolean | undefined;
  'insight-error-bodies'?: boolean | undefined;
  'panics-as-500'?: boolean | undefined;
  'sql-errors-as-500'?: boolean | undefined;
  'omit-empty'?: boolean | undefined;
  'strict-resolve'?: boolean | undefined;
  'indexer-records'?: boolean | undefined;
}

/** The flags of the real service's behaviours: each overrides what --profile says. */
const BEHAVIOUR_FLAGS = [
  ['nft-instance-limit', 'nftInstanceLimit'],
  ['nft-distinct-amount', 'nftDistinctAmount'],
  ['nft-checksummed', 'nftChecksummed'],
  ['nft-token-keys', 'nftTokenKeys'],
  ['nft-type-order', 'nftTypeOrder'],
  ['nft-echo-page-params', 'nftEchoPageParams'],
  ['nft-ungrouped-route', 'nftUngroupedRoute'],
  ['insight-error-bodies', 'insightErrorBodies'],
  ['panics-as-500', 'panicsAs500'],
  ['sql-errors-as-500', 'sqlErrorsAs500'],
  ['omit-empty', 'omitEmpty'],
  ['strict-resolve', 'strictResolve'],
  ['indexer-records', 'indexerRecords'],
] as const satisfies readonly (readonly [keyof SandboxArgs, keyof SandboxOptions])[];

const FAULT_FLAGS: [keyof SandboxArgs, FaultKind][] = [
  ['fault-500', 'http500'],
  ['fault-502', 'http502'],
  ['fault-503', 'http503'],
  ['fault-429', 'http429'],
  ['fault-reset', 'reset'],
  ['fault-truncate', 'truncate'],
  ['fault-stall', 'stall'],
];

/** CLI flags -> SandboxOptions (auth comes from INSIGHT_SANDBOX_CLIENT_ID / INSIGHT_SANDBOX_SECRET_KEY). */
export function sandboxOptionsFromArgs(args: SandboxArgs, env: NodeJS.ProcessEnv = process.env): SandboxOptions {
  const rates: FaultOptions['rates'] = {};
  for (const [flag, kind] of FAULT_FLAGS) {
    const v = args[flag] as number;
    if (!(v >= 0 && v <= 1)) throw new SandboxOptionsError(`--${flag} must be a rate in 0..1`, { details: `got ${v}` });
    if (v > 0) rates[kind] = v;
  }
  const opts: SandboxOptions = {
    host: args.host,
    port: args.port,
    seed: args.seed,
    transactions: args.transactions,
    pathPrefix: args['path-prefix'],
    explorerPrefix: args['explorer-prefix'],
    nftPageSize: args['nft-page-size'],
    duplicateSelfTransfers: args['duplicate-self-transfers'],
    legacyTypes: args['legacy-types'],
    decodedVariants: args['decoded-variants'],
    // Unset (undefined) unless given, so that the profile's defaults stand.
    profile: args.profile,
    walletUnion: args['wallet-union'],
    unstableOrder: args['unstable-order'],
    indexerLimits: args['indexer-limits'],
    maxChainIdsPerRequest: args['max-chain-ids'],
    repeatEarlierRows: args['repeat-earlier-rows'],
    foreignRows: args['foreign-rows'],
    okErrorBody: args['ok-error-body'],
    okWithoutData: args['ok-without-data'],
    cutFullPages: args['cut-full-pages'],
    goValues: args['go-values'],
    goAggregations: args['go-aggregations'],
    richContract: args['rich-contract'] === true,
    extraChains: args['extra-chains'],
    indexedUntil: args['indexed-until'] === undefined ? undefined : blockTime(args['indexed-until'], '--indexed-until'),
    compress: args.compress !== false,
    ...inconsistencyOptionsFromArgs(args),
    catalog: catalogOptionsFromArgs(args, env),
  };
  for (const [flag, option] of BEHAVIOUR_FLAGS) {
    if (args[flag] !== undefined) (opts as Record<string, unknown>)[option] = args[flag];
  }
  if (args['latency-ms'] > 0 || args['jitter-ms'] > 0) opts.latency = { fixedMs: args['latency-ms'], jitterMs: args['jitter-ms'] };
  if (args.rps !== undefined) opts.rateLimit = { requestsPerSecond: args.rps, retryAfterSeconds: args['retry-after'] ?? 1 };
  if (Object.keys(rates).length > 0) {
    opts.faults = {
      rates,
      stallMs: args['stall-ms'],
      seed: args['fault-seed'],
      retryAfterSeconds: args['retry-after'],
      htmlPages: args['fault-html'] === true,
    };
  }
  const clientId = env.INSIGHT_SANDBOX_CLIENT_ID;
  const secretKey = env.INSIGHT_SANDBOX_SECRET_KEY;
  if (clientId || secretKey) opts.auth = { clientId: clientId || undefined, secretKey: secretKey || undefined };
  return opts;
}

/** Starts the sandbox, prints its URLs (stdout, one `key=value` per line) and waits for SIGINT/SIGTERM. */
export async function runSandbox(opts: SandboxOptions, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  const sandbox: Sandbox = await startSandbox(opts);
  await serveUntilSignalled(sandbox, sandboxBanner(sandbox.data), out);
}

/** What the CLI around the sandbox gives it: the sandbox package itself has no S3 client. */
export interface SandboxCommandHooks {
  /** A writer of the catalog's metadata files for a warehouse on S3 (`--catalog-warehouse s3://...`). */
  catalogWriteObject?(warehouse: string): Promise<(uri: string, text: string) => Promise<void>>;
}

/** The `sandbox` command, with the CLI's hooks. */
export function sandboxCommandWith(hooks: SandboxCommandHooks): CommandModule<object, SandboxArgs> {
  return {
    command: 'sandbox',
    describe:
      'Serve the read interface locally from a seeded data set, or from a JSON-RPC node with --rpc (with optional latency, rate limit and faults)',
    builder: (y: Argv<object>) =>
      rpcOptions(
        indexerAnswerOptions(dataShapeOptions(behaviourOptions(serverAndFaultOptions(catalogFlags(inconsistencyFlags(y)))))),
      ).example(
        '$0 sandbox --rpc http://127.0.0.1:8545 --abi 0x5FbDB2315678afecb367f032d93F642f64180aa3=out/MyToken.json',
        'Serve a local anvil chain',
      ) as unknown as Argv<SandboxArgs>,
    handler: async (args) => {
      const opts = sandboxOptionsFromArgs(args);
      const warehouse = opts.catalog?.warehouse;
      if (warehouse !== undefined && /^s3:\/\//i.test(warehouse) && hooks.catalogWriteObject) {
        opts.catalog = { ...opts.catalog, writeObject: await hooks.catalogWriteObject(warehouse) };
      }
      if (args.rpc && args.rpc.length > 0) await runRpcSandbox({ ...opts, ...rpcOptionsFromArgs(args) });
      else await runSandbox(opts);
    },
  };
}

/** The `sandbox` command on its own (a warehouse on S3 is refused: no writer). */
export const sandboxCommand: CommandModule<object, SandboxArgs> = sandboxCommandWith({});

/** The server, its data set and the injected faults. */
function serverAndFaultOptions<T>(y: Argv<T>) {
  return y
    .option('port', { type: 'number', default: 8787, describe: 'TCP port (0 = random)' })
    .option('host', { type: 'string', default: '127.0.0.1' })
    .option('transactions', { type: 'number', default: 20_000, describe: 'Transactions across all chains' })
    .option('seed', { type: 'number', default: 42, describe: 'Same seed => identical data' })
    .option('latency-ms', { type: 'number', default: 0, describe: 'Fixed latency per request' })
    .option('jitter-ms', { type: 'number', default: 0, describe: 'Random extra latency up to this' })
    .option('rps', { type: 'number', describe: 'Requests per second before 429 + Retry-After' })
    .option('retry-after', { type: 'number', describe: 'Retry-After seconds for 429s (rate limit and injected)' })
    .option('fault-500', { type: 'number', default: 0, describe: 'Rate (0..1) of injected HTTP 500' })
    .option('fault-502', { type: 'number', default: 0, describe: 'Rate of injected HTTP 502' })
    .option('fault-503', { type: 'number', default: 0, describe: 'Rate of injected HTTP 503' })
    .option('fault-429', { type: 'number', default: 0, describe: 'Rate of injected HTTP 429' })
    .option('fault-reset', { type: 'number', default: 0, describe: 'Rate of connection resets' })
    .option('fault-truncate', { type: 'number', default: 0, describe: 'Rate of truncated bodies' })
    .option('fault-stall', { type: 'number', default: 0, describe: 'Rate of stalled bodies' })
    .option('stall-ms', { type: 'number', default: 60_000, describe: 'How long a stalled body stays silent' })
    .option('fault-html', {
      type: 'boolean',
      describe: 'Answer injected 502/503 with an HTML error page, as a load balancer or CDN does',
    })
    .option('fault-seed', { type: 'number', default: 1, describe: 'Seed of the fault decisions' })
    .option('path-prefix', {
      type: 'string',
      default: '/insights/v1',
      describe: 'Prefix of the insights routes (the hosted service uses /v1)',
    })
    .option('explorer-prefix', { type: 'string', default: '/api/v2' })
    .option('nft-page-size', { type: 'number', default: 50 })
    .option('duplicate-self-transfers', {
      type: 'boolean',
      default: false,
      describe: 'Return self-transfers twice (real UNION ALL behaviour)',
    })
    .option('legacy-types', { type: 'boolean', default: false, describe: 'Some rows use older wire types' })
    .option('decoded-variants', { type: 'boolean', default: false, describe: 'Some decoded bytes as base64 / number arrays' });
}

/** The real service's behaviours: a profile's defaults and the flags that override them. */
function behaviourOptions<T>(y: Argv<T>) {
  return y
    .option('profile', {
      type: 'string',
      choices: SANDBOX_PROFILE_NAMES,
      describe:
        'Defaults for the flags below: contract (the documented interface, default), indexer (what the real indexer does), hostile (indexer + misbehaving server); flags given still win',
    })
    .option('wallet-union', {
      type: 'boolean',
      describe: "Wallet route as the indexer's UNION ALL query: offset applied twice, no global order, self-transfers twice",
    })
    .option('unstable-order', {
      type: 'boolean',
      describe: 'Rows tied on the sort key in a new order per request; without sort_by no order at all',
    })
    .option('indexer-limits', { type: 'boolean', describe: "The indexer's limit and page: default limit 5, no cap on limit or page" })
    .option('max-chain-ids', {
      type: 'number',
      describe: 'Chain ids a request may name (default 55); more are refused with a 400, as a hosted service with a lower limit does',
    })
    .option('repeat-earlier-rows', {
      type: 'number',
      describe: 'Rate (0..1) of pages that start early, repeating rows an earlier page carried in earlier blocks',
    })
    .option('foreign-rows', {
      type: 'number',
      describe: 'Rate (0..1) of list rows followed by a row at the same position of another wallet, contract, event or chain',
    })
    .option('ok-error-body', { type: 'number', describe: 'Rate (0..1) of list answers that are HTTP 200 with an {"error"} body' })
    .option('ok-without-data', { type: 'number', describe: 'Rate (0..1) of row answers that are HTTP 200 with data null or missing' })
    .option('cut-full-pages', {
      type: 'number',
      describe:
        'Rate (0..1) of row answers whose full pages lose their last row (limit - 1 rows; limit 1 spared), as a broken proxy or CDN does',
    })
    .option('go-values', {
      type: 'boolean',
      describe: 'Decoded values as the open-source indexer writes them (base64, number arrays, bare big numbers, failed-decode shape)',
    })
    .option('go-aggregations', {
      type: 'boolean',
      describe: 'Aggregations as the open-source indexer sends them (RFC 3339, quoted UInt256, zero row, wallet UNION halves)',
    });
}

/** The shape of the data and answers: extra contracts and chains, the index horizon, compression, Blockscout. */
function dataShapeOptions<T>(y: Argv<T>) {
  return y
    .option('rich-contract', {
      type: 'boolean',
      default: false,
      describe: 'Add a contract whose calls and logs carry tuples, arrays, bytes and negative ints',
    })
    .option('extra-chains', {
      type: 'number',
      describe: 'Serve this many small chains more (ids 1000001, 1000002, ...), e.g. for jobs with more chains than one request takes',
    })
    .option('indexed-until', {
      type: 'string',
      describe:
        "The service's index reaches this block time only (ISO 8601 or unix seconds): later rows, counts and blocks are not served, as an indexer behind the chain",
    })
    .option('compress', {
      type: 'boolean',
      default: true,
      describe: 'Answer in br or gzip when the request accepts it, as a CDN does (--no-compress: never)',
    })
    .option('nft-instance-limit', {
      type: 'number',
      describe: 'Blockscout: at most this many token instances per NFT collection, highest id first (9)',
    })
    .option('nft-distinct-amount', { type: 'boolean', describe: 'Blockscout: ERC-1155 amount = distinct token instances' })
    .option('nft-checksummed', { type: 'boolean', describe: 'Blockscout: NFT addresses in checksum case' })
    .option('nft-token-keys', {
      type: 'string',
      choices: ['old', 'both', 'new'],
      describe: 'Blockscout: token keys address/holders (old), address_hash/holders_count (new) or both',
    })
    .option('nft-type-order', { type: 'boolean', describe: 'Blockscout: collections ERC-721, ERC-1155, ERC-404, each by contract hash' })
    .option('nft-echo-page-params', { type: 'boolean', describe: 'Blockscout: next_page_params echoes the request plus items_count' })
    .option('nft-ungrouped-route', { type: 'boolean', describe: 'Blockscout: serve addresses/<hash>/nft (every instance, paged)' });
}

/** The open-source indexer's answers, on top of the profile. */
function indexerAnswerOptions<T>(y: Argv<T>) {
  return y
    .option('insight-error-bodies', { type: 'boolean', describe: 'indexer: error bodies {code, message, support_id}' })
    .option('panics-as-500', { type: 'boolean', describe: 'indexer: unparsable signature / unindexed block in resolve: 500, empty body' })
    .option('sql-errors-as-500', {
      type: 'boolean',
      describe: 'indexer: aggregates and filters it cannot run: 500 "An unexpected error occurred."',
    })
    .option('omit-empty', {
      type: 'boolean',
      describe: 'indexer: meta fields omitted when zero, data/aggregations omitted, resolve of nothing data {}',
    })
    .option('strict-resolve', {
      type: 'boolean',
      describe: 'indexer: resolve takes numbers and 0x inputs of 10/42/66 chars only; no type unknown',
    })
    .option('indexer-records', {
      type: 'boolean',
      describe: 'indexer: to_address "" on creations, function_selector "", fees "0" on legacy, blob fields',
    });
}

/** Serving a JSON-RPC node (--rpc) instead of seeded data. */
function rpcOptions<T>(y: Argv<T>) {
  return y
    .option('rpc', {
      type: 'string',
      array: true,
      describe: 'Serve the chain of this JSON-RPC node instead of seeded data (repeat for more chains), e.g. http://127.0.0.1:8545',
    })
    .option('abi', {
      type: 'string',
      array: true,
      describe: 'With --rpc: ABI file for decoding, "file.json" (any contract) or "0xADDRESS=file.json" (repeatable)',
    })
    .option('poll-ms', {
      type: 'number',
      default: 1000,
      describe: 'With --rpc: poll for new and reorganised blocks this often (0 = never)',
    })
    .option('from-block', {
      type: 'number',
      default: 0,
      describe: 'With --rpc: first block to load (negative: that many below the head)',
    })
    .option('receipts', {
      type: 'string',
      choices: ['auto', 'block', 'transaction'],
      default: 'auto',
      describe: 'With --rpc: eth_getBlockReceipts (block), per-transaction receipts, or auto',
    });
}
