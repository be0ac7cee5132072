import type { SandboxOptions } from './server.js';

/**
 * Named sets of sandbox wire knobs. `indexer`: what the open-source indexer behind the hosted
 * service does with values (decoded values, aggregations); other branches add their knobs here.
 */
export const SANDBOX_PROFILES = {
  indexer: { goValues: true, goAggregations: true },
} satisfies Record<string, Partial<SandboxOptions>>;

export type SandboxProfile = keyof typeof SANDBOX_PROFILES;
