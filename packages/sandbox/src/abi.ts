import {
  decodeAbiParameters,
  encodeAbiParameters,
  encodeFunctionData,
  parseAbi,
  parseAbiItem,
  toEventSelector,
  toFunctionSelector,
  type Abi,
  type AbiEvent,
  type AbiFunction,
  type AbiParameter,
  type Hex,
} from 'viem';
import { canonicalSignature } from '../../../src/shared-with-sandbox.js';
import { compileParametersDecoder, type ParametersDecoder } from '../../../src/shared-with-sandbox.js';
import { badRequest } from './errors.js';
import { uint256Hex } from './prng.js';

/**
 * Token standards of the sandbox contracts; `unknown` has no ABI in the registry; `rich` (only
 * with the `richContract` build option) takes and emits tuples, arrays, bytes and negative ints.
 */
export type ContractKind = 'erc20' | 'erc721' | 'erc1155' | 'unknown' | 'rich';

/** What a generated transaction does (stored per row as a small integer). */
export const TxKind = {
  native: 0,
  erc20Transfer: 1,
  erc20Approve: 2,
  erc721TransferFrom: 3,
  erc721SafeTransferFrom: 4,
  erc1155SafeTransferFrom: 5,
  unknownPoke: 6,
  deploy: 7,
  createOther: 8,
  richSettle: 9,
} as const;
export type TxKind = (typeof TxKind)[keyof typeof TxKind];

export const ERC20_ABI = parseAbi([
  'function transfer(address to, uint256 value) returns (bool)',
  'function approve(address spender, uint256 value) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
]);
export const ERC721_ABI = parseAbi([
  'function transferFrom(address from, address to, uint256 tokenId)',
  'function safeTransferFrom(address from, address to, uint256 tokenId)',
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
]);
export const ERC1155_ABI = parseAbi([
  'function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)',
  'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
]);
/** The "unknown" contract: its calls and logs are real ABI encodings, but no registry ABI knows them. */
export const UNKNOWN_ABI = parseAbi(['function poke(uint256 round, bytes32 tag)', 'event SandboxPing(uint256 indexed round, bytes32 tag)']);

/** The `rich` contract: every value encoding the real indexer varies on (tuples, fixed and dynamic arrays, bytes, bytesN, negative and > 2^53 ints). */
export const RICH_ABI = parseAbi([
  'function settle((address account, int256 delta, uint256[2] limits, bytes memo) order, bytes32[] refs, int64 shift, bytes4 tag)',
  'event Settled(address indexed account, int256 indexed delta, bytes8 indexed code, (uint256 amount, int128 change, bytes3 flags, bytes note) info, uint256[2] window, bytes payload, int32 skew)',
]);
export const RICH_EVENT_SIGNATURE =
  'Settled(address indexed account, int256 indexed delta, bytes8 indexed code, (uint256 amount, int128 change, bytes3 flags, bytes note) info, uint256[2] window, bytes payload, int32 skew)';

export const ABI_BY_KIND: Record<ContractKind, Abi | null> = {
  erc20: ERC20_ABI,
  erc721: ERC721_ABI,
  erc1155: ERC1155_ABI,
  unknown: null,
  rich: RICH_ABI,
};

export const SELECTOR = {
  transfer: toFunctionSelector('function transfer(address to, uint256 value)'),
  approve: toFunctionSelector('function approve(address spender, uint256 value)'),
  transferFrom: toFunctionSelector('function transferFrom(address from, address to, uint256 tokenId)'),
  safeTransferFrom721: toFunctionSelector('function safeTransferFrom(address from, address to, uint256 tokenId)'),
  safeTransferFrom1155: toFunctionSelector('function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)'),
  poke: toFunctionSelector('function poke(uint256 round, bytes32 tag)'),
  settle: toFunctionSelector(RICH_ABI[0]),
} as const;

export const TOPIC0 = {
  Transfer: toEventSelector('Transfer(address,address,uint256)'),
  Approval: toEventSelector('Approval(address,address,uint256)'),
  TransferSingle: toEventSelector('TransferSingle(address,address,address,uint256,uint256)'),
  SandboxPing: toEventSelector('SandboxPing(uint256,bytes32)'),
  Settled: toEventSelector(RICH_ABI[1]),
} as const;

/** Canonical (types-only) signatures, as sent in `decoded.signature`. */
export const CANONICAL = {
  transfer: 'transfer(address,uint256)',
  approve: 'approve(address,uint256)',
  transferFrom: 'transferFrom(address,address,uint256)',
  safeTransferFrom721: 'safeTransferFrom(address,address,uint256)',
  safeTransferFrom1155: 'safeTransferFrom(address,address,uint256,uint256,bytes)',
  Transfer: 'Transfer(address,address,uint256)',
  Approval: 'Approval(address,address,uint256)',
  TransferSingle: 'TransferSingle(address,address,address,uint256,uint256)',
  SandboxPing: 'SandboxPing(uint256,bytes32)',
  settle: 'settle((address,int256,uint256[2],bytes),bytes32[],int64,bytes4)',
  Settled: 'Settled(address,int256,bytes8,(uint256,int128,bytes3,bytes),uint256[2],bytes,int32)',
} as const;

/** Arguments of one `rich` call and its `Settled` log (derived per row by the data set). */
export interface RichArgs {
  account: string;
  delta: bigint;
  limits: [bigint, bigint];
  memo: string;
  refs: string[];
  shift: bigint;
  tag: string;
  code: string;
  info: { amount: bigint; change: bigint; flags: string; note: string };
  window: [bigint, bigint];
  payload: string;
  skew: number;
}

export function encodeSettle(a: RichArgs): string {
  return encodeFunctionData({
    abi: RICH_ABI,
    functionName: 'settle',
    args: [{ account: a.account as Hex, delta: a.delta, limits: a.limits, memo: a.memo as Hex }, a.refs as Hex[], a.shift, a.tag as Hex],
  });
}

const SETTLED_DATA = (RICH_ABI[1].inputs as readonly AbiParameter[]).filter((p) => !(p as { indexed?: boolean }).indexed);

export function settledTopics(a: RichArgs): string[] {
  return [TOPIC0.Settled, addressTopic(a.account), '0x' + uint256Hex(BigInt.asUintN(256, a.delta)), a.code.padEnd(66, '0')];
}

export function settledData(a: RichArgs): string {
  return encodeAbiParameters(SETTLED_DATA, [
    { amount: a.info.amount, change: a.info.change, flags: a.info.flags as Hex, note: a.info.note as Hex },
    a.window,
    a.payload as Hex,
    a.skew,
  ]);
}

// ---- fast encoders for the fixed argument shapes we generate (checked against viem in tests) ----

export function addressWord(address: string): string {
  return '000000000000000000000000' + address.slice(2);
}
export function addressTopic(address: string): string {
  return '0x' + addressWord(address);
}
export function uintWord(v: bigint | number): string {
  return uint256Hex(BigInt(v));
}
export function uintTopic(v: bigint | number): string {
  return '0x' + uintWord(v);
}

/** ABI encoding of a dynamic `bytes` value placed last in the head (after `headWords` words). */
function bytesTail(hex: string): string {
  const body = hex.slice(2);
  const len = body.length / 2;
  const padded = body.padEnd(Math.ceil(body.length / 64) * 64, '0');
  return uintWord(len) + padded;
}

export function encodeTransfer(to: string, value: bigint): string {
  return SELECTOR.transfer + addressWord(to) + uintWord(value);
}
export function encodeApprove(spender: string, value: bigint): string {
  return SELECTOR.approve + addressWord(spender) + uintWord(value);
}
export function encodeTransferFrom(from: string, to: string, tokenId: bigint): string {
  return SELECTOR.transferFrom + addressWord(from) + addressWord(to) + uintWord(tokenId);
}
export function encodeSafeTransferFrom721(from: string, to: string, tokenId: bigint): string {
  return SELECTOR.safeTransferFrom721 + addressWord(from) + addressWord(to) + uintWord(tokenId);
}
export function encodeSafeTransferFrom1155(from: string, to: string, id: bigint, value: bigint, data: string): string {
  return (
    SELECTOR.safeTransferFrom1155 +
    addressWord(from) +
    addressWord(to) +
    uintWord(id) +
    uintWord(value) +
    uintWord(5 * 32) +
    bytesTail(data)
  );
}
export function encodePoke(round: bigint, tag: string): string {
  return SELECTOR.poke + uintWord(round) + tag.slice(2);
}

// ---- decoding (viem is the decoder; values are converted to the service's wire encodings) ----

/** How `bytes`/`bytesN` values are rendered: hex (default) or, as some real paths do, base64 / number arrays. */
export type BytesStyle = 'hex' | 'base64' | 'array';

/** ints <= 64 bits as JSON numbers, larger as decimal strings, addresses lowercase, bytes per style. */
export function wireValue(param: AbiParameter, value: unknown, style: BytesStyle): unknown {
  const type = param.type;
  const arr = /^(.*)\[(\d*)\]$/.exec(type);
  if (arr) {
    const inner = { ...param, type: arr[1]! } as AbiParameter;
    return (value as unknown[]).map((v) => wireValue(inner, v, style));
  }
  if (type === 'tuple') {
    const comps = (param as { components?: readonly AbiParameter[] }).components ?? [];
    const out: Record<string, unknown> = {};
    comps.forEach((c, i) => {
      const v: unknown = Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.name ?? String(i)];
      out[c.name || `arg${i}`] = wireValue(c, v, style);
    });
    return out;
  }
  const int = /^u?int(\d*)$/.exec(type);
  if (int) {
    const bits = int[1] ? Number(int[1]) : 256;
    return bits <= 64 ? Number(value as bigint) : (value as bigint).toString();
  }
  if (type === 'address') return (value as string).toLowerCase();
  if (type === 'bytes' || /^bytes\d+$/.test(type)) {
    const hex = (value as string).toLowerCase();
    if (style === 'hex') return hex;
    const buf = Buffer.from(hex.slice(2), 'hex');
    return style === 'base64' ? buf.toString('base64') : [...buf];
  }
  return value;
}

function isDynamic(param: AbiParameter): boolean {
  return param.type === 'string' || param.type === 'bytes' || param.type.endsWith(']') || param.type === 'tuple';
}

/**
 * A parsed event signature of the events route. The sandbox keeps its own parser on purpose: it
 * stands for the service, so it checks the exporter's parser (src/abi/event-signature.ts) instead
 * of sharing its mistakes.
 */
export interface ParsedEventSignature {
  item: AbiEvent;
  topic0: string;
  canonical: string;
}

const signatureCache = new Map<string, ParsedEventSignature>();

/**
 * Parses a human-readable event signature (`Transfer(address indexed from, address indexed to, uint256 value)`,
 * optional `event ` prefix, names optional). A bare topic hash is rejected with 400.
 */
export function parseEventSignature(input: string): ParsedEventSignature {
  const cached = signatureCache.get(input);
  if (cached) return cached;
  const text = input.trim();
  if (/^0x[0-9a-fA-F]*$/.test(text)) {
    throw badRequest('invalid event signature: a topic hash is not accepted, send the human-readable signature', text);
  }
  if (/(^|[(,\s])u?int(?=[\s,)[])/.test(text)) {
    // The real service hashes the text as given: `uint` would give a different topic0.
    throw badRequest(`invalid event signature: ${text}`, 'types must be canonical: uint256/int256, not uint/int');
  }
  let item: AbiEvent;
  try {
    const parsed = parseAbiItem(text.startsWith('event ') ? text : `event ${text}`);
    if (parsed.type !== 'event') throw new Error('not an event');
    item = parsed as AbiEvent;
  } catch (err) {
    throw badRequest(`invalid event signature: ${text}`, (err as Error).message?.split('\n')[0]);
  }
  const topic0 = toEventSelector(item);
  const canonical = canonicalSignature(item);
  const result = { item, topic0, canonical };
  if (signatureCache.size > 1000) signatureCache.clear();
  signatureCache.set(input, result);
  return result;
}

export interface DecodedEventValue {
  name: string;
  signature: string;
  indexed_params: Record<string, unknown>;
  non_indexed_params: Record<string, unknown>;
  /** Positional arguments (for POST decode). */
  args: unknown[];
}

/** Strict positional decode of a log with one event ABI item; null when topics/data do not fit. */
export function decodeLogWith(
  item: AbiEvent,
  canonical: string,
  topics: readonly string[],
  data: string,
  style: BytesStyle,
): DecodedEventValue | null {
  // Positions, not parameter objects: viem reuses one object for identical unnamed parameters.
  const indexedPos = item.inputs.map((p, i) => (p.indexed ? i : -1)).filter((i) => i >= 0);
  const dataPos = item.inputs.map((p, i) => (p.indexed ? -1 : i)).filter((i) => i >= 0);
  if (topics.length !== 1 + indexedPos.length) return null;
  try {
    const indexedParams: Record<string, unknown> = {};
    const nonIndexedParams: Record<string, unknown> = {};
    const args: unknown[] = new Array(item.inputs.length);
    indexedPos.forEach((pos, k) => {
      const p = item.inputs[pos]!;
      const topic = topics[1 + k] as Hex;
      args[pos] = isDynamic(p) ? topic : wireValue(p, decodeAbiParameters([p], topic)[0], style);
    });
    if (dataPos.length > 0) {
      const values = decodeAbiParameters(
        dataPos.map((pos) => item.inputs[pos]!),
        data as Hex,
      );
      dataPos.forEach((pos, k) => (args[pos] = wireValue(item.inputs[pos]!, values[k], style)));
    } else if (data !== '0x' && data !== '') {
      return null;
    }
    item.inputs.forEach((p, i) => {
      (p.indexed ? indexedParams : nonIndexedParams)[p.name || `arg${i}`] = args[i];
    });
    return { name: item.name, signature: canonical, indexed_params: indexedParams, non_indexed_params: nonIndexedParams, args };
  } catch {
    return null;
  }
}

/** Decode a log with a contract ABI (the registry path): the event whose topic0 matches. */
export function decodeLogWithAbi(abi: Abi, topics: readonly string[], data: string, style: BytesStyle): DecodedEventValue | null {
  const topic0 = topics[0]?.toLowerCase();
  if (!topic0) return null;
  for (const item of abi) {
    if (item.type !== 'event') continue;
    const canonical = canonicalSignature(item);
    if (toEventSelectorCached(item, canonical) !== topic0) continue;
    const decoded = decodeLogWith(item, canonical, topics, data, style);
    if (decoded) return decoded;
  }
  return null;
}

const selectorCache = new Map<string, string>();
function toEventSelectorCached(item: AbiEvent, canonical: string): string {
  let s = selectorCache.get(canonical);
  if (!s) {
    s = toEventSelector(item);
    selectorCache.set(canonical, s);
  }
  return s;
}

export interface DecodedCallValue {
  name: string;
  signature: string;
  inputs: Record<string, unknown>;
  args: unknown[];
}

/** Decode calldata with a contract ABI; null when no function matches or the data does not fit. */
export function decodeCallWithAbi(abi: Abi, data: string, style: BytesStyle): DecodedCallValue | null {
  if (data.length < 10) return null;
  // As viem's decodeFunctionData: the first ABI function whose selector is the data's first 4 bytes, as written.
  const fn = functionsBySelector(abi).get(data.slice(0, 10));
  if (!fn) return null;
  try {
    const args = fn.item.inputs.length === 0 ? [] : fn.decodeArgs(`0x${data.slice(10)}`);
    const inputs: Record<string, unknown> = {};
    const wireArgs: unknown[] = [];
    fn.item.inputs.forEach((p, i) => {
      const v = wireValue(p, args[i], style);
      wireArgs.push(v);
      inputs[p.name || `arg${i}`] = v;
    });
    return { name: fn.item.name, signature: fn.signature, inputs, args: wireArgs };
  } catch {
    return null;
  }
}

interface CompiledFunction {
  item: AbiFunction;
  signature: string;
  /** viem's decoding of the arguments, addresses read as words: the wire lowercases them anyway, so no checksum is computed. */
  decodeArgs: ParametersDecoder;
}

const compiledAbis = new WeakMap<Abi, Map<string, CompiledFunction>>();

function functionsBySelector(abi: Abi): Map<string, CompiledFunction> {
  let bySelector = compiledAbis.get(abi);
  if (!bySelector) {
    bySelector = new Map();
    for (const item of abi) {
      if (item.type !== 'function') continue;
      const selector = toFunctionSelector(item);
      if (bySelector.has(selector)) continue;
      bySelector.set(selector, { item, signature: canonicalSignature(item), decodeArgs: compileParametersDecoder(item.inputs) });
    }
    compiledAbis.set(abi, bySelector);
  }
  return bySelector;
}
