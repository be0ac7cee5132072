/**
 * The kinds of job target, and the unit targets a dataset builds its own target from: the planner
 * turns each job target into unit targets (a wallet, each event of a contract, a chain target),
 * and each dataset declares the kinds it takes (`capabilities.targetKinds`) and builds its target
 * from a unit target of those kinds (`Dataset.buildTarget`).
 */
import type { ParsedEventSignature } from '../abi/event-signature.js';
import type { Hex } from '../source/records.js';
import type { NftTokenType } from '../source/query.js';

/** wallet: an address or name; contract: a contract's events; chain: the chains themselves (no wallet or contract). */
export type TargetKind = 'wallet' | 'contract' | 'chain';

interface StreamTargetBase {
  /** Index in the job's targets. */
  targetIndex: number;
  /** Where the job file writes the target's `tables:` (`targets[1]`, or `targets[1].events[0]` for an event). */
  at: string;
  /** The job-file field that gives the target's datasets their default tables (its datasets, or its event). */
  defaultTableAt: string;
  /** Table names the job file gives the target's datasets, by dataset. */
  tables?: Partial<Record<string, string>>;
}

export interface WalletStreamTarget extends StreamTargetBase {
  kind: 'wallet';
  /** Lowercase address or ENS name. */
  wallet: string;
  isName: boolean;
  nft_types: NftTokenType[];
}

/** One event signature of a contract target. */
export interface ContractStreamTarget extends StreamTargetBase {
  kind: 'contract';
  contract: Hex;
  event: ParsedEventSignature & { signature: string };
  eventIndex: number;
  /** Absolute path of the target's ABI file, or null. */
  abi: string | null;
}

/** A chain target: what a dataset exports of each chain itself (its blocks). */
export interface ChainStreamTarget extends StreamTargetBase {
  kind: 'chain';
}

export type StreamTarget = WalletStreamTarget | ContractStreamTarget | ChainStreamTarget;

export type StreamTargetOf<K extends TargetKind> = Extract<StreamTarget, { kind: K }>;
