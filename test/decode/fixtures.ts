/**
 * Test helpers: real ABI-encoded logs (viem encodeEventTopics / encodeAbiParameters) and the
 * column values a correct decoder must produce, computed from the encoded inputs by rules written
 * independently of src/decode/decoded-values.ts.
 */
import { encodeAbiParameters, encodeEventTopics, getAddress, keccak256, toHex, type AbiEvent, type AbiParameter, type Hex } from 'viem';
import { formatAbiItem } from 'viem/utils';
import type { RowValue } from '../../src/columns/columns.js';
import type { DecodedEvent, EventRecord } from '../../src/source/records.js';
import { parseEventSignature, type ParsedEventSignature } from '../../src/abi/event-signature.js';

export const SIGS = {
  erc20Transfer: 'Transfer(address indexed from, address indexed to, uint256 value)',
  erc20Approval: 'Approval(address indexed owner, address indexed spender, uint256 value)',
  erc721Transfer: 'Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  erc1155Single: 'TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
  erc1155Batch: 'TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
  complex:
    'OrderFilled(bytes32 indexed orderHash, string indexed tag, (address maker, uint128 amount, int24 tick, bytes extra) order, string note, bytes payload, bool isPartial, int256 delta, bytes4 selector, uint8[] flags)',
} as const;

export function sig(key: keyof typeof SIGS): ParsedEventSignature {
  return parseEventSignature(SIGS[key]);
}

const isIndexed = (p: AbiParameter) => (p as { indexed?: boolean }).indexed === true;

/** A log record as the client would hand it over, with the values ABI-encoded by viem. */
export function encodeLog(event: AbiEvent, values: readonly unknown[], extra: Partial<EventRecord> = {}): EventRecord {
  // Positional args of encodeEventTopics are the indexed parameters only, in ABI order.
  const indexedArgs = values.filter((_, i) => isIndexed(event.inputs[i] as AbiParameter));
  const topics = encodeEventTopics({
    abi: [{ ...event, inputs: event.inputs.map(({ name: _n, ...rest }) => rest) }] as AbiEvent[],
    args: indexedArgs as never,
  } as never) as Hex[];
  const plain = event.inputs.map((p, i) => [p, values[i]] as const).filter(([p]) => !isIndexed(p));
  const data = encodeAbiParameters(
    plain.map(([p]) => p),
    plain.map(([, v]) => v),
  );
  return {
    chain_id: 1,
    block_number: 100,
    block_hash: `0x${'ab'.repeat(32)}`,
    block_timestamp: 1_700_000_000,
    transaction_hash: `0x${'cd'.repeat(32)}`,
    transaction_index: 0,
    log_index: 0,
    address: `0x${'11'.repeat(20)}`,
    data,
    topics: topics.map((t) => t.toLowerCase()),
    decoded: null,
    ...extra,
  };
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function expectedJson(param: AbiParameter, value: unknown): Json {
  const t = param.type;
  const arr = /^(.*)\[\d*\]$/.exec(t);
  if (arr) {
    const element = { ...param, type: arr[1] } as AbiParameter;
    return (value as unknown[]).map((v) => expectedJson(element, v));
  }
  if (t === 'tuple') {
    const comps = (param as unknown as { components: AbiParameter[] }).components;
    const named = comps.every((c) => c.name);
    const parts = comps.map((c, i) =>
      expectedJson(c, Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.name as string]),
    );
    return named ? Object.fromEntries(comps.map((c, i) => [c.name as string, parts[i] as Json])) : parts;
  }
  if (/^u?int\d*$/.test(t)) return BigInt(value as bigint | number).toString();
  if (t === 'address' || t.startsWith('bytes')) return (value as string).toLowerCase();
  return value as Json;
}

/** The column value a correct decoder produces for one encoded parameter value. */
export function expectedColumn(param: AbiParameter, value: unknown): RowValue {
  if (isIndexed(param)) {
    if (param.type === 'string') return keccak256(toHex(value as string));
    if (param.type === 'bytes') return keccak256(value as Hex);
  }
  const json = expectedJson(param, value);
  return typeof json === 'object' && json !== null ? JSON.stringify(json) : json;
}

// ---- service-shaped `decoded` objects -------------------------------------------------------

/** How the service spells one value; `variant` picks among the shapes its versions send (see src/decode/decoded-values.ts). */
export function serviceShape(param: AbiParameter, value: unknown, variant: number): unknown {
  const t = param.type;
  const arr = /^(.*)\[\d*\]$/.exec(t);
  if (arr) {
    const element = { ...param, type: arr[1] } as AbiParameter;
    return (value as unknown[]).map((v, i) => serviceShape(element, v, variant + i));
  }
  if (t === 'tuple') {
    const comps = (param as unknown as { components: AbiParameter[] }).components;
    const get = (c: AbiParameter, i: number) => (Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.name as string]);
    switch (variant % 3) {
      case 0: // object keyed by component name
        return Object.fromEntries(comps.map((c, i) => [c.name, serviceShape(c, get(c, i), variant + i)]));
      case 1: // Go struct: capitalised field names
        return Object.fromEntries(
          comps.map((c, i) => [
            (c.name as string).charAt(0).toUpperCase() + (c.name as string).slice(1),
            serviceShape(c, get(c, i), variant + i),
          ]),
        );
      default: // positional
        return comps.map((c, i) => serviceShape(c, get(c, i), variant + i));
    }
  }
  if (/^u?int\d*$/.test(t)) {
    const v = BigInt(value as bigint | number);
    const safe = v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER);
    const bits = Number(t.replace(/^u?int/, '') || 256);
    switch (variant % 3) {
      case 0: // ints <= 64 bits as JSON numbers (when exact), larger as decimal strings
        return bits <= 64 && safe ? Number(v) : v.toString();
      case 1:
        return v.toString();
      default:
        return v >= 0n ? `0x${v.toString(16)}` : v.toString();
    }
  }
  if (t === 'address') return variant % 2 === 0 ? getAddress(value as string) : (value as string).toLowerCase();
  if (t.startsWith('bytes')) {
    const buf = Buffer.from((value as string).slice(2), 'hex');
    switch (variant % 4) {
      case 0:
        return (value as string).toLowerCase();
      case 1:
        return buf.toString('base64');
      case 2:
        return [...buf];
      default:
        return JSON.parse(JSON.stringify(buf)) as unknown; // {type: 'Buffer', data: [...]}
    }
  }
  return value;
}

/** The `decoded` object of a log as the service could send it, after a JSON round trip. */
export function serviceDecoded(event: AbiEvent, values: readonly unknown[], variant: number): DecodedEvent {
  const indexed: Record<string, unknown> = {};
  const plain: Record<string, unknown> = {};
  event.inputs.forEach((p, i) => {
    let v = serviceShape(p, values[i], variant + i);
    if (isIndexed(p) && (p.type === 'string' || p.type === 'bytes')) v = expectedColumn(p, values[i]);
    (isIndexed(p) ? indexed : plain)[p.name ?? String(i)] = v;
  });
  return JSON.parse(
    JSON.stringify({ name: event.name, signature: formatAbiItem(event), indexed_params: indexed, non_indexed_params: plain }),
  ) as DecodedEvent;
}

/** A copy of the record that local decoding cannot decode (invalid hex), so only `decoded` can. */
export function locallyUndecodable(event: AbiEvent, record: EventRecord): EventRecord {
  const hasData = event.inputs.some((p) => !isIndexed(p));
  if (hasData) return { ...record, data: `0x${'zz'.repeat(32)}` };
  return { ...record, topics: [record.topics[0] as string, `0x${'zz'.repeat(32)}`, ...record.topics.slice(2)] };
}

export const ADDRESSES = [
  '0x0000000000000000000000000000000000000000',
  '0xd8da6bf26964af9d7eed9e03e53415d37aa96045',
  '0xffffffffffffffffffffffffffffffffffffffff',
  '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed',
] as const;
export const UINT256_MAX = 2n ** 256n - 1n;
