import { parseAbi, toEventSelector, type Abi, type AbiEvent } from 'viem';
import { loadAbiFile } from '../../../../src/shared-with-sandbox.js';
import {
  decodeCallWithAbi,
  decodeLogWithAbi,
  type BytesStyle,
  type ContractKind,
  type DecodedCallValue,
  type DecodedEventValue,
} from '../abi.js';
import { SandboxOptionsError } from '../errors.js';

/** The standard token ABIs (EIP-20, EIP-721, EIP-1155): the registry's built-in knowledge. */
export const STANDARD_ABIS: Record<Exclude<ContractKind, 'unknown' | 'rich'>, Abi> = {
  erc20: parseAbi([
    'function transfer(address to, uint256 value) returns (bool)',
    'function transferFrom(address from, address to, uint256 value) returns (bool)',
    'function approve(address spender, uint256 value) returns (bool)',
    'event Transfer(address indexed from, address indexed to, uint256 value)',
    'event Approval(address indexed owner, address indexed spender, uint256 value)',
  ]),
  erc721: parseAbi([
    'function transferFrom(address from, address to, uint256 tokenId)',
    'function safeTransferFrom(address from, address to, uint256 tokenId)',
    'function safeTransferFrom(address from, address to, uint256 tokenId, bytes data)',
    'function approve(address to, uint256 tokenId)',
    'function setApprovalForAll(address operator, bool approved)',
    'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
    'event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)',
    'event ApprovalForAll(address indexed owner, address indexed operator, bool approved)',
  ]),
  erc1155: parseAbi([
    'function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)',
    'function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] values, bytes data)',
    'function setApprovalForAll(address operator, bool approved)',
    'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
    'event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
    'event ApprovalForAll(address indexed account, address indexed operator, bool approved)',
    'event URI(string value, uint256 indexed id)',
  ]),
};
const STANDARD_ORDER = [STANDARD_ABIS.erc20, STANDARD_ABIS.erc721, STANDARD_ABIS.erc1155];

/** An ABI given on the command line: for one contract (`0xADDRESS=file.json`) or for any (`file.json`). */
export interface UserAbi {
  /** Lowercase address, or null for "any contract". */
  address: string | null;
  file: string;
  abi: Abi;
}

const SPEC_RE = /^(0x[0-9a-fA-F]{40})=(.+)$/;

/** Reads `--abi` values: `file.json` or `0xADDRESS=file.json` (JSON ABI, compiler artifact, or human-readable list). */
export async function loadUserAbis(specs: readonly string[]): Promise<UserAbi[]> {
  return Promise.all(
    specs.map(async (spec) => {
      const m = SPEC_RE.exec(spec.trim());
      const file = m ? m[2]! : spec.trim();
      if (file === '')
        throw new SandboxOptionsError(`--abi ${JSON.stringify(spec)} names no file`, {
          hint: 'use --abi file.json or --abi 0xADDRESS=file.json',
        });
      return { address: m ? m[1]!.toLowerCase() : null, file, abi: await loadAbiFile(file) };
    }),
  );
}

function eventTopics(abi: Abi): Set<string> {
  const out = new Set<string>();
  for (const item of abi) if (item.type === 'event' && !item.anonymous) out.add(toEventSelector(item as AbiEvent));
  return out;
}

/**
 * The sandbox-over-RPC's ABI registry (what the real service keeps per contract): for a contract, the
 * ABIs bound to its address, then the ABIs given for any contract, then the standard ABI of the token
 * standard its logs show (all three standards, ERC-20 first, when they show none). The first ABI
 * that decodes a call or log wins; a contract with none of these has no ABI (decode 404,
 * `decoded: null`).
 */
export class AbiRegistry {
  private readonly bound = new Map<string, Abi[]>();
  private readonly unbound: Abi[] = [];
  private readonly topicCache = new WeakMap<Abi, Set<string>>();

  constructor(userAbis: readonly UserAbi[] = []) {
    for (const u of userAbis) {
      if (u.address === null) this.unbound.push(u.abi);
      else this.bound.set(u.address, [...(this.bound.get(u.address) ?? []), u.abi]);
    }
  }

  /** ABIs for a contract, most specific first; `kind` is the standard its logs show (null: none yet). */
  candidates(address: string, kind: ContractKind | null): Abi[] {
    const own = this.bound.get(address.toLowerCase()) ?? [];
    const standard = kind && kind !== 'unknown' && kind !== 'rich' ? [STANDARD_ABIS[kind]] : STANDARD_ORDER;
    return [...own, ...this.unbound, ...standard];
  }

  /** True when the contract has an ABI of its own: bound to it, given for any contract, or its standard's. */
  hasAbi(address: string, kind: ContractKind | null): boolean {
    return this.bound.has(address.toLowerCase()) || this.unbound.length > 0 || (kind !== null && kind !== 'unknown');
  }

  private topics(abi: Abi): Set<string> {
    let t = this.topicCache.get(abi);
    if (!t) this.topicCache.set(abi, (t = eventTopics(abi)));
    return t;
  }

  /** True when an ABI of the contract defines an event with this topic0. */
  knowsEvent(address: string, kind: ContractKind | null, topic0: string): boolean {
    if (!this.hasAbi(address, kind)) return false;
    return this.candidates(address, kind).some((abi) => this.topics(abi).has(topic0.toLowerCase()));
  }

  decodeCall(address: string | null, kind: ContractKind | null, input: string, style: BytesStyle): DecodedCallValue | null {
    if (address === null || !this.hasAbi(address, kind)) return null;
    for (const abi of this.candidates(address, kind)) {
      const d = decodeCallWithAbi(abi, input, style);
      if (d) return d;
    }
    return null;
  }

  decodeLog(
    address: string,
    kind: ContractKind | null,
    topics: readonly string[],
    data: string,
    style: BytesStyle,
  ): DecodedEventValue | null {
    if (!this.hasAbi(address, kind)) return null;
    for (const abi of this.candidates(address, kind)) {
      const d = decodeLogWithAbi(abi, topics, data, style);
      if (d) return d;
    }
    return null;
  }
}
