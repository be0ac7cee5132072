import type { FieldPath } from '../yaml-file/yaml-doc.js';

/** Ids of the chains people most often write by name. */
const CHAIN_IDS: Record<string, number> = {
  ethereum: 1,
  mainnet: 1,
  eth: 1,
  optimism: 10,
  bsc: 56,
  gnosis: 100,
  polygon: 137,
  zksync: 324,
  base: 8453,
  arbitrum: 42161,
  avalanche: 43114,
  linea: 59144,
  blast: 81457,
  scroll: 534352,
  sepolia: 11155111,
};

/** A chain written by name where its id belongs: the hint names the id (`ethereum is 1`). */
export function chainNameHint(path: FieldPath, value: unknown): string | undefined {
  const inChains = path.some((seg, i) => seg === 'chains' && typeof path[i + 1] === 'number');
  if (!inChains || typeof value !== 'string') return undefined;
  const id =
    CHAIN_IDS[
      value
        .trim()
        .toLowerCase()
        .replace(/[\s_-]+/g, '')
    ];
  return id === undefined
    ? 'chains are numeric ids, e.g. 1 = Ethereum, 8453 = Base, 42161 = Arbitrum One'
    : `chains are numeric ids: ${value} is ${id}`;
}
