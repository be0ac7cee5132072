/** How deep below the newest exported block a reorganisation is repaired on its own (src/state/reorg-check.ts). */
/**
 * Reorganisation horizon in blocks by chain id, when the job does not set range.reorg_horizon:
 * a few times the depth at which each chain's blocks are final (or its deepest reorganisations
 * seen), so what a run must still repair is covered and older windows cost nothing.
 */
export const DEFAULT_REORG_HORIZONS: Readonly<Record<number, number>> = {
  1: 128, // Ethereum: final after 2 epochs (64 blocks)
  10: 64, // OP Mainnet, Base, Arbitrum: a sequencer's order, rarely reorganised
  8453: 64,
  42161: 64,
  56: 64, // BNB Smart Chain: fast finality within a few blocks
  43114: 16, // Avalanche C-Chain: final on acceptance
  137: 512, // Polygon PoS: reorganisations over 100 blocks deep were seen before its fast finality
};
/** Other chains: a few hundred blocks. */
export const DEFAULT_REORG_HORIZON = 256;

export function reorgHorizon(setting: number | Record<string, number> | undefined, chainId: number): number {
  if (typeof setting === 'number') return setting;
  return setting?.[String(chainId)] ?? DEFAULT_REORG_HORIZONS[chainId] ?? DEFAULT_REORG_HORIZON;
}
