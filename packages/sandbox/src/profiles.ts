import { SandboxOptionsError } from './errors.js';
import type { SandboxOptions, SandboxProfile } from './options.js';

/** Options a profile may set: the behaviour knobs, not where or over what the server runs. */
export type ProfileOptions = Omit<SandboxOptions, 'profile' | 'data' | 'seed' | 'transactions' | 'host' | 'port'>;

/** Every behaviour of the open-source indexer's API that the sandbox reproduces. */
const INDEXER: ProfileOptions = {
  walletUnion: true,
  unstableOrder: true,
  indexerLimits: true,
  goValues: true,
  goAggregations: true,
  // Blockscout's NFT routes
  nftInstanceLimit: 9,
  nftDistinctAmount: true,
  nftChecksummed: true,
  nftTokenKeys: 'new',
  nftTypeOrder: true,
  nftEchoPageParams: true,
  nftUngroupedRoute: true,
  // the indexer's errors, envelopes, resolve and records
  insightErrorBodies: true,
  panicsAs500: true,
  sqlErrorsAs500: true,
  omitEmpty: true,
  strictResolve: true,
  indexerRecords: true,
};

/**
 * Named sets of defaults for the sandbox's options (`--profile`). `contract` is the read
 * interface as documented; `indexer` adds what the real indexer's code does; `hostile` adds what
 * misbehaving servers of the interface were seen to do.
 */
export const SANDBOX_PROFILES = {
  contract: {},
  indexer: INDEXER,
  hostile: {
    ...INDEXER,
    repeatEarlierRows: 0.1,
    foreignRows: 0.05,
    okErrorBody: 0.05,
    okWithoutData: 0.05,
    // a service answering inconsistently (src/sandbox/inconsistencies.ts), at low rates
    replicaLag: 0.05,
    replicaLagBehindSeconds: 2 * 86_400,
    staleCache: 0.05,
    emptyAnswers: 0.02,
    millisecondTimestamps: 0.02,
    neighbourSlices: 0.02,
    cutFullPages: 0.02,
  },
} satisfies Record<SandboxProfile, ProfileOptions>;

export type { SandboxProfile } from './options.js';
export const SANDBOX_PROFILE_NAMES = Object.keys(SANDBOX_PROFILES) as SandboxProfile[];

/** `opts` over the defaults of its profile: options set (not undefined) win. */
export function withProfile(opts: SandboxOptions): SandboxOptions {
  const name = opts.profile ?? 'contract';
  if (!Object.hasOwn(SANDBOX_PROFILES, name)) {
    throw new SandboxOptionsError(`unknown sandbox profile ${JSON.stringify(name)}`, {
      hint: `one of ${SANDBOX_PROFILE_NAMES.join(', ')}`,
    });
  }
  const set = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
  return { ...SANDBOX_PROFILES[name], ...set };
}

/** The options a profile sets (its name included); an unknown name is a SandboxOptionsError. */
export function profileOptions(name: string): SandboxOptions {
  return withProfile({ profile: name as SandboxProfile });
}
