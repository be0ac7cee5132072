/** The sandbox data set's public shapes (chains, wallets, contracts, holdings) and the chains it serves. */
import { type ContractKind } from './abi.js';

export interface ChainInfo {
  chainId: number;
  name: string;
  blockTimeSeconds: number;
  firstBlock: number;
  firstTimestamp: number;
  headBlock: number;
  headTimestamp: number;
  /** Transactions on this chain (all rows of `transactions(chainId)`). */
  transactionCount: number;
  /** Logs on this chain (all rows of `logs(chainId)`). */
  logCount: number;
}

export interface WalletInfo {
  /** Index in `wallets`; wallet 0 is the hottest (about a third of all transactions). */
  id: number;
  address: string;
  /** ENS-like name (`alice.eth`) accepted by the wallet route and resolve; null for most wallets. */
  name: string | null;
  /** Rows of the wallet route per chain (from OR to = wallet, a self-transfer once). */
  transactionsByChain: Record<number, number>;
  transactionCount: number;
}

export interface ContractInfo {
  chainId: number;
  address: string;
  kind: ContractKind;
  name: string;
  symbol: string | null;
}

/** The arguments a generated call or log was encoded from: addresses lowercase hex, uints decimal strings, bytes hex. */
export interface EncodedArgs {
  name: string;
  signature: string;
  args: Record<string, string>;
}

export interface NftTokenHolding {
  /** Token id, decimal. */
  id: string;
  /** 1 for ERC-721; the balance for ERC-1155 (decimal). */
  amount: string;
}
export interface NftHolding {
  contract: ContractInfo;
  tokens: NftTokenHolding[];
}

// ------------------------------------------------------------------ chain specs

export interface ChainSpec {
  chainId: number;
  name: string;
  blockTimeSeconds: number;
  firstBlock: number;
  share: number;
  txPerBlock: number;
  baseFee: [number, number];
  priorityFee: [number, number];
  erc20: number;
  maxErc721: number;
  maxErc1155: number;
}

export const CHAIN_SPECS: ChainSpec[] = [
  {
    chainId: 1,
    name: 'ethereum',
    blockTimeSeconds: 12,
    firstBlock: 19_130_000,
    share: 0.4,
    txPerBlock: 6,
    baseFee: [5e9, 60e9],
    priorityFee: [1e8, 3e9],
    erc20: 3,
    maxErc721: 130,
    maxErc1155: 25,
  },
  {
    chainId: 8453,
    name: 'base',
    blockTimeSeconds: 2,
    firstBlock: 10_300_000,
    share: 0.35,
    txPerBlock: 4,
    baseFee: [1e6, 1e8],
    priorityFee: [1e5, 2e6],
    erc20: 2,
    maxErc721: 10,
    maxErc1155: 3,
  },
  {
    chainId: 42161,
    name: 'arbitrum',
    blockTimeSeconds: 1,
    firstBlock: 176_000_000,
    share: 0.25,
    txPerBlock: 3,
    baseFee: [1e7, 1e8],
    priorityFee: [0, 1e6],
    erc20: 2,
    maxErc721: 8,
    maxErc1155: 2,
  },
];
