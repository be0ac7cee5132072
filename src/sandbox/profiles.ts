import { SandboxOptionsError } from './errors.js';
import type { SandboxOptions } from './server.js';

/**
 * Named sets of sandbox options (`insight-export sandbox --profile <name>`). `contract` is the read
 * interface as its contract describes it; `indexer` turns on every behaviour of the real
 * implementations (the open-source indexer behind the hosted service, and Blockscout behind the
 * explorer pass-through), each of which is also an option of its own.
 */
export const SANDBOX_PROFILES = {
  contract: {},
  indexer: {
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
  },
} as const satisfies Record<string, SandboxOptions>;

export type SandboxProfile = keyof typeof SANDBOX_PROFILES;
export const SANDBOX_PROFILE_NAMES = Object.keys(SANDBOX_PROFILES) as SandboxProfile[];

/** The options of a profile; unknown names are a SandboxOptionsError. */
export function profileOptions(name: string): SandboxOptions {
  if (!Object.hasOwn(SANDBOX_PROFILES, name)) {
    throw new SandboxOptionsError(`unknown sandbox profile "${name}"`, { hint: `one of ${SANDBOX_PROFILE_NAMES.join(', ')}` });
  }
  return { ...SANDBOX_PROFILES[name as SandboxProfile] };
}
