import { decodeAbiParameters, decodeFunctionData, type Abi, type AbiEvent, type AbiFunction, type AbiParameter, type Hex } from 'viem';
import { canonicalSignature } from '../../../src/shared-with-sandbox.js';
import type { DecodedEvent, DecodedTransaction } from '../../../src/shared-with-sandbox.js';

/**
 * Decoded values as the open-source indexer serialises them (go-ethereum's ABI unpacking, then
 * encoding/json): the `goValues` wire knob.
 *
 * Transactions (`UnpackIntoMap` + `ConvertBigNumbersToString`, which only walks the top-level
 * map): `bytes` -> base64, `bytesN` -> arrays of numbers, tuples -> objects keyed by component
 * name (`field0`, ... when unnamed), int8/16/32/64 -> JSON numbers, other ints -> decimal strings
 * at the top level and in top-level dynamic arrays, bare JSON numbers everywhere else (tuples,
 * fixed arrays), whatever their size. Top-level keys sorted (Go maps).
 * Events: the same, except at the top level of non-indexed params `bytes` and `bytes32` -> hex
 * (`convertBytesAndNumericToHex`), other `bytesN` stay arrays; indexed params: ints -> the topic
 * read as an unsigned decimal string (negatives come back as 2^256 - x), `bytesN`/`bytes`/
 * `string`/tuples/arrays -> the whole topic; unnamed params keyed by their position ("0", "1").
 * A failed decode is `{"name":"","signature":"",...null}`.
 */

/** A JSON number written as bare digits, as Go writes a *big.Int; JSON.parse would round it beyond 2^53. */
export class BareNumber {
  constructor(readonly digits: string) {}
}

const SENTINEL = '\u0000bare:';
const SENTINEL_RE = /"\\u0000bare:(-?\d+)"/g;

/** JSON text of a response body; BareNumber values become bare digits. */
export function jsonText(body: unknown, withBareNumbers: boolean): string {
  if (!withBareNumbers) return JSON.stringify(body);
  const text = JSON.stringify(body, (_key, value: unknown) => (value instanceof BareNumber ? SENTINEL + value.digits : value));
  return text.replace(SENTINEL_RE, '$1');
}

type Route = 'transaction' | 'event';
type Place = 'top' | 'nested';

const GO_NATIVE_INT_BITS = new Set([8, 16, 32, 64]);

function intBits(type: string): number | null {
  const m = /^u?int(\d*)$/.exec(type);
  return m ? (m[1] ? Number(m[1]) : 256) : null;
}

function components(param: AbiParameter): readonly AbiParameter[] {
  return (param as { components?: readonly AbiParameter[] }).components ?? [];
}

function goNumber(v: bigint): number | BareNumber {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : new BareNumber(v.toString());
}

function goValue(param: AbiParameter, value: unknown, route: Route, place: Place): unknown {
  const type = param.type;
  const arr = /^(.*)\[(\d*)\]$/.exec(type);
  if (arr) {
    const element = { ...param, type: arr[1]! } as AbiParameter;
    const list = value as unknown[];
    const bits = intBits(element.type);
    if (element.type === 'uint8') {
      // []uint8 is []byte to encoding/json (base64; hex at an event's top level); [N]uint8 stays an array, [32]uint8 too except there.
      const bytes = Buffer.from(list.map(Number));
      if (arr[2] === '') return route === 'event' && place === 'top' ? `0x${bytes.toString('hex')}` : bytes.toString('base64');
      if (arr[2] === '32' && route === 'event' && place === 'top') return `0x${bytes.toString('hex')}`;
    }
    if (arr[2] === '' && place === 'top' && bits !== null && !GO_NATIVE_INT_BITS.has(bits)) {
      return list.map((v) => (v as bigint).toString()); // []*big.Int: ConvertBigNumbersToString
    }
    return list.map((v) => goValue(element, v, route, 'nested'));
  }
  if (type === 'tuple') {
    const out: Record<string, unknown> = {};
    components(param).forEach((c, i) => {
      const v: unknown = Array.isArray(value) ? (value as unknown[])[i] : (value as Record<string, unknown>)[c.name ?? String(i)];
      out[c.name || `field${i}`] = goValue(c, v, route, 'nested');
    });
    return out;
  }
  const bits = intBits(type);
  if (bits !== null) {
    const v = value as bigint;
    if (GO_NATIVE_INT_BITS.has(bits)) return goNumber(v);
    return place === 'top' ? v.toString() : new BareNumber(v.toString());
  }
  if (type === 'address') return (value as string).toLowerCase();
  if (type === 'bytes' || /^bytes\d+$/.test(type)) {
    const hex = (value as string).toLowerCase();
    const buf = Buffer.from(hex.slice(2), 'hex');
    if (route === 'event' && place === 'top' && (type === 'bytes' || type === 'bytes32')) return hex;
    return type === 'bytes' ? buf.toString('base64') : [...buf];
  }
  return value;
}

/** Go's encoding/json writes map keys sorted. */
function sortedKeys(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj).sort()) out[key] = obj[key];
  return out;
}

export const GO_FAILED_TRANSACTION = { name: '', signature: '', inputs: null } as unknown as DecodedTransaction;
export const GO_FAILED_EVENT = { name: '', signature: '', indexed_params: null, non_indexed_params: null } as unknown as DecodedEvent;

/** `decoded` of a transaction by its contract's ABI (null ABI: the failed shape). */
export function goDecodedTransaction(abi: Abi | null, data: string): DecodedTransaction {
  if (!abi || data.length < 10) return GO_FAILED_TRANSACTION;
  try {
    const { functionName, args } = decodeFunctionData({ abi, data: data as Hex });
    const item = abi.find(
      (i): i is AbiFunction => i.type === 'function' && i.name === functionName && i.inputs.length === (args ?? []).length,
    );
    if (!item) return GO_FAILED_TRANSACTION;
    const inputs: Record<string, unknown> = {};
    item.inputs.forEach((p, i) => (inputs[p.name ?? ''] = goValue(p, (args ?? [])[i], 'transaction', 'top')));
    return { name: item.name, signature: canonicalSignature(item), inputs: sortedKeys(inputs) };
  } catch {
    return GO_FAILED_TRANSACTION;
  }
}

function goIndexed(param: AbiParameter, topic: string): unknown {
  if (param.type === 'address') return `0x${topic.slice(26)}`;
  if (intBits(param.type) !== null) return BigInt(topic).toString(); // SetBytes: unsigned
  if (param.type === 'bool') return BigInt(topic) !== 0n;
  return topic;
}

/** `decoded` of a log by the request's event signature (the events route always decodes). */
export function goDecodedEvent(item: AbiEvent, topics: readonly string[], data: string): DecodedEvent {
  const indexed = item.inputs.map((p, i) => ({ p, i })).filter(({ p }) => p.indexed);
  const plain = item.inputs.map((p, i) => ({ p, i })).filter(({ p }) => !p.indexed);
  const key = (p: AbiParameter, i: number) => p.name || String(i);
  if (topics.length < indexed.length + 1) return GO_FAILED_EVENT;
  try {
    const indexedParams: Record<string, unknown> = {};
    indexed.forEach(({ p, i }, k) => (indexedParams[key(p, i)] = goIndexed(p, topics[k + 1]!)));
    const nonIndexedParams: Record<string, unknown> = {};
    if (plain.length > 0) {
      const values = decodeAbiParameters(
        plain.map(({ p }) => p),
        data as Hex,
      );
      plain.forEach(({ p, i }, k) => (nonIndexedParams[key(p, i)] = goValue(p, values[k], 'event', 'top')));
    }
    return {
      name: item.name,
      signature: canonicalSignature(item),
      indexed_params: sortedKeys(indexedParams),
      non_indexed_params: sortedKeys(nonIndexedParams),
    };
  } catch {
    return GO_FAILED_EVENT;
  }
}
