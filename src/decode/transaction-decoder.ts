import type { Abi, AbiEvent, AbiFunction, AbiParameter, Hex } from 'viem';
import { parseAbiItem } from 'abitype';
import type { Column, RowOf } from '../columns/columns.js';
import type { TransactionRecord } from '../source/records.js';
import { canonicalSignature, functionSelector, isSupportedType } from '../abi/abi-types.js';
import { TRANSACTION_DECODE_COLUMNS } from './columns.js';
import type { DecodeResult } from './event-decoder.js';
import { decodeStaticWords, staticLayout, type StaticLayout } from './static-words.js';
import { compileParametersDecoder, type ParametersDecoder } from './calldata.js';
import { bytesToHex, compileJsonNormaliser, DecodeValueError, lookupParam, type JsonValue } from './decoded-values.js';

export interface TransactionDecoder {
  /** decoded_function_name, decoded_signature, decoded_inputs_json, decode_status. */
  columns: Column[];
  decode(record: TransactionRecord): DecodeResult;
}

export interface TransactionDecoderOptions {
  /** Functions to decode calldata with locally (matched by selector). */
  abi?: Abi | undefined;
  /** Use the service's `decoded` object first (default true); false: decode locally first. */
  preferService?: boolean | undefined;
}

interface KnownFunction {
  name: string;
  signature: string;
  inputs: readonly AbiParameter[];
  keys: string[];
  normalisers: ((value: unknown) => JsonValue)[];
  /** True when no input has a name (a types-only signature): names then come from the service's keys. */
  unnamed: boolean;
  /** 0x + 4 bytes, lowercase. */
  selector: string;
  /** Word layout when every input is one static word (the fast path), else null. */
  layout: StaticLayout | null;
  /** The arguments of `0x` + calldata after the selector (addresses lowercase, not checksummed). */
  decodeArgs: ParametersDecoder;
}

type Decoded = { name: string; signature: string | null; inputs: string };
type Attempt = Decoded | { reason: string } | null;

/** JSON keys for a parameter list: the ABI name, position when unnamed, `<name>_<position>` when repeated. */
function inputKeys(params: readonly AbiParameter[]): string[] {
  const used = new Set<string>();
  return params.map((p, i) => {
    let key = p.name || String(i);
    if (used.has(key)) key = `${key}_${i}`;
    used.add(key);
    return key;
  });
}

function knownFunction(fn: AbiFunction): KnownFunction | null {
  if (!fn.inputs.every(isSupportedType)) return null;
  return {
    name: fn.name,
    signature: canonicalSignature(fn),
    inputs: fn.inputs,
    keys: inputKeys(fn.inputs),
    normalisers: fn.inputs.map(compileJsonNormaliser),
    unnamed: fn.inputs.length > 0 && fn.inputs.every((p) => !p.name),
    selector: functionSelector(canonicalSignature(fn)),
    layout: staticLayout({ type: 'event', name: fn.name, inputs: fn.inputs.map((p) => ({ ...p, indexed: false })) } as AbiEvent),
    decodeArgs: compileParametersDecoder(fn.inputs),
  };
}

const DECIMAL_RE = /^-?\d+$/;
const LEADING_ZEROS_RE = /^(-?)0+(?=\d)/;

/**
 * Loose equality of a value the service sent with the canonical value of the calldata: integers
 * compared as doubles (a bare JSON number beyond 2^53 arrived rounded), bytes in any of the
 * service's shapes, tuples by position. Only used to tell which input a service key names.
 */
function looselyEqual(sent: unknown, canonical: JsonValue): boolean {
  if (typeof sent === 'number') return (typeof canonical === 'string' || typeof canonical === 'number') && Number(canonical) === sent;
  if (typeof sent === 'string') {
    if (sent === canonical) return true;
    if (typeof canonical !== 'string') return false;
    // Canonical integers are decimal without leading zeros; addresses and bytes 0x hex.
    if (!canonical.startsWith('0x')) return DECIMAL_RE.test(sent) && sent.replace(LEADING_ZEROS_RE, '$1') === canonical;
    // Hex or base64 of the same bytes (checked by length first: this runs per key and argument).
    const bytes = (canonical.length - 2) / 2;
    if (sent.length !== canonical.length && sent.length !== 4 * Math.ceil(bytes / 3) && sent.length !== Math.ceil((bytes * 4) / 3))
      return false;
    return bytesToHex(sent) === canonical;
  }
  if (typeof sent === 'boolean' || sent === null) return sent === canonical;
  if (Array.isArray(sent)) {
    if (typeof canonical === 'string') return bytesToHex(sent) === canonical;
    return Array.isArray(canonical) && canonical.length === sent.length && sent.every((x, i) => looselyEqual(x, canonical[i] as JsonValue));
  }
  if (isObject(sent)) {
    const parts = Object.values(sent);
    const want = Array.isArray(canonical) ? canonical : isObject(canonical) ? Object.values(canonical) : null;
    return want !== null && want.length === parts.length && parts.every((x, i) => looselyEqual(x, want[i] as JsonValue));
  }
  return false;
}

/** Best effort when no types are known: hex lowercased, integers as decimal strings, bytes as hex. */
function genericJson(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (Number.isInteger(value) && !Number.isSafeInteger(value))
      throw new DecodeValueError('number beyond 2^53 (precision lost)', 'inputs', value);
    return Number.isInteger(value) ? BigInt(value).toString() : value;
  }
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return /^0x[0-9a-fA-F]*$/.test(value) ? value.toLowerCase() : value;
  if (value instanceof Uint8Array) return bytesToHex(value);
  if (Array.isArray(value)) return value.map(genericJson);
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (obj.type === 'Buffer' && Array.isArray(obj.data)) return bytesToHex(obj.data);
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(obj)) out[k] = genericJson(v);
    return out;
  }
  return String(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The function signatures the service sent, each parsed or formatted once per decoder. */
class ServiceSignatures {
  /** Service signatures seen so far, parsed once each (null: not parseable or unnamed inputs). */
  private readonly parsed = new Map<string, KnownFunction | null>();
  /** The service's signature text as written when no function could be built from it (formatted once each). */
  private readonly formatted = new Map<string, string>();

  constructor(private readonly bySignature: ReadonlyMap<string, KnownFunction>) {}

  /** The function the service's signature text names: the ABI's when the canonical forms agree, else the
   *  text itself when it names every input. */
  parse(signature: unknown): KnownFunction | null {
    if (typeof signature !== 'string' || signature === '') return null;
    let known = this.parsed.get(signature);
    if (known === undefined) {
      known = null;
      try {
        const item = parseAbiItem(`function ${signature.trim().replace(/^function\s+/, '')}`);
        if (item.type === 'function') known = this.bySignature.get(canonicalSignature(item)) ?? knownFunction(item);
      } catch {
        known = null;
      }
      this.parsed.set(signature, known);
    }
    return known;
  }

  format(signature: string): string {
    let formatted = this.formatted.get(signature);
    if (formatted === undefined) {
      formatted = signature;
      try {
        formatted = canonicalSignature(parseAbiItem(`function ${signature.replace(/^function\s+/, '')}`) as AbiFunction);
      } catch {
        // keep the service's text
      }
      this.formatted.set(signature, formatted);
    }
    return formatted;
  }
}

function encode(fn: KnownFunction, raw: (i: number) => unknown): Attempt {
  const out: Record<string, JsonValue> = {};
  try {
    for (let i = 0; i < fn.inputs.length; i++) {
      out[fn.keys[i] as string] = (fn.normalisers[i] as (v: unknown) => JsonValue)(raw(i));
    }
  } catch (err) {
    if (err instanceof DecodeValueError) return { reason: err.reason };
    throw err;
  }
  return { name: fn.name, signature: fn.signature, inputs: JSON.stringify(out) };
}

/**
 * A call the service decoded with a function known only by its types (its `signature` is
 * types-only): the values come from the calldata, decoded with those types; the service's
 * keys only name them. Each key (in sorted order, so the service's key order does not matter)
 * names the first free input its value equals; a key whose value equals inputs of different
 * values is an error rather than a guess.
 */
function namedByService(fn: KnownFunction, inputs: Record<string, unknown>, data: string): Attempt {
  const keys = Object.keys(inputs).sort();
  if (keys.length !== fn.inputs.length) return { reason: 'service decoded inputs do not match the signature' };
  if (data.slice(0, 10).toLowerCase() !== fn.selector) return { reason: 'calldata does not match the service signature' };
  const argsData = `0x${data.slice(10)}`;
  let values = fn.layout ? (decodeStaticWords(fn.layout, [fn.selector], argsData) as JsonValue[] | null) : null;
  if (!values) {
    let args: readonly unknown[];
    try {
      args = fn.decodeArgs(argsData as Hex);
    } catch {
      return { reason: 'calldata does not match the service signature' };
    }
    values = new Array<JsonValue>(args.length);
    try {
      for (let i = 0; i < args.length; i++) values[i] = (fn.normalisers[i] as (v: unknown) => JsonValue)(args[i]);
    } catch (err) {
      if (err instanceof DecodeValueError) return { reason: err.reason };
      throw err;
    }
  }
  const names = new Array<string | undefined>(values.length);
  for (const key of keys) {
    let at = -1;
    for (let j = 0; j < values.length; j++) {
      if (names[j] !== undefined || !looselyEqual(inputs[key], values[j] as JsonValue)) continue;
      if (at < 0) at = j;
      else if (JSON.stringify(values[j]) !== JSON.stringify(values[at]))
        return { reason: `service input ${JSON.stringify(key)} matches more than one argument` };
    }
    if (at < 0) return { reason: 'service decoded inputs do not match the calldata' };
    names[at] = key;
  }
  const out: Record<string, JsonValue> = {};
  for (let j = 0; j < values.length; j++) out[names[j] as string] = values[j] as JsonValue;
  return { name: fn.name, signature: fn.signature, inputs: JSON.stringify(out) };
}

function locally(data: string, known: KnownFunction | undefined): Attempt {
  if (!known) return null;
  let args: readonly unknown[];
  try {
    // `known` was found by this selector: what follows it is the arguments.
    args = known.inputs.length > 0 ? known.decodeArgs(`0x${data.slice(10)}` as Hex) : [];
  } catch {
    return { reason: 'calldata does not match the ABI' };
  }
  return encode(known, (i) => args[i]);
}

function result(status: string, ok?: Decoded): DecodeResult {
  const values: RowOf<typeof TRANSACTION_DECODE_COLUMNS> = {
    decoded_function_name: ok?.name ?? null,
    decoded_signature: ok?.signature ?? null,
    decoded_inputs_json: ok?.inputs ?? null,
    decode_status: status,
  };
  return { status, values };
}

export function createTransactionDecoder(opts: TransactionDecoderOptions = {}): TransactionDecoder {
  const preferService = opts.preferService ?? true;
  const bySelector = new Map<string, KnownFunction>();
  for (const item of opts.abi ?? []) {
    if (item.type !== 'function') continue;
    const known = knownFunction(item);
    if (!known) continue;
    const selector = functionSelector(known.signature);
    if (!bySelector.has(selector)) bySelector.set(selector, known);
  }
  const signatures = new ServiceSignatures(new Map([...bySelector.values()].map((k) => [k.signature, k])));

  function fromService(record: TransactionRecord, known: KnownFunction | undefined): Attempt {
    const decoded = record.decoded;
    if (!decoded || typeof decoded.name !== 'string' || decoded.name === '' || !isObject(decoded.inputs)) return null;
    const inputs = decoded.inputs;
    const fn = known && known.name === decoded.name ? known : signatures.parse(decoded.signature);
    if (fn && fn.unnamed) return namedByService(fn, inputs, record.data || '0x');
    if (!fn) {
      const signature = typeof decoded.signature === 'string' && decoded.signature !== '' ? signatures.format(decoded.signature) : null;
      try {
        return { name: decoded.name, signature, inputs: JSON.stringify(genericJson(inputs)) };
      } catch (err) {
        if (err instanceof DecodeValueError) return { reason: err.reason };
        throw err;
      }
    }
    let count = 0;
    for (const key in inputs) if (Object.hasOwn(inputs, key)) count++;
    if (count !== fn.inputs.length) return { reason: 'service decoded inputs do not match the ABI' };
    const raw = new Array<unknown>(fn.inputs.length);
    for (let i = 0; i < raw.length; i++) {
      raw[i] = lookupParam(inputs, fn.inputs[i]!.name, i);
      if (raw[i] === undefined) return { reason: 'service decoded inputs do not match the ABI' };
    }
    return encode(fn, (i) => raw[i]);
  }

  return {
    columns: [...TRANSACTION_DECODE_COLUMNS],
    decode(record: TransactionRecord): DecodeResult {
      const data = record.data || '0x';
      const known = data.length >= 10 ? bySelector.get(data.slice(0, 10).toLowerCase()) : undefined;
      // No closures or collections per row: this runs for every transaction exported.
      const first = preferService ? fromService(record, known) : locally(data, known);
      if (first && 'name' in first) return result('ok', first);
      const second = preferService ? locally(data, known) : fromService(record, known);
      if (second && 'name' in second) return result('ok', second);
      // Local decoding is authoritative about the bytes; the service's reason otherwise.
      const localOutcome = preferService ? second : first;
      const serviceOutcome = preferService ? first : second;
      const reason = localOutcome?.reason ?? serviceOutcome?.reason;
      if (reason !== undefined) return result(`error: ${reason}`);
      return result(data === '0x' ? 'no_calldata' : 'no_abi');
    },
  };
}
