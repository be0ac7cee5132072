import { decodeEventLog, type Abi, type AbiEvent, type AbiParameter, type Hex } from 'viem';
import type { Column, Row, RowValue } from '../columns/columns.js';
import type { EventRecord } from '../source/records.js';
import { isIndexed } from '../abi/abi-types.js';
import { eventDecodeColumns } from './columns.js';
import { effectiveEvent } from './effective-event.js';
import { compileNormaliser, DecodeValueError, lookupParam, type RowNormaliser } from './decoded-values.js';
import type { ParsedEventSignature } from '../abi/event-signature.js';
import { decodeStaticWords, staticLayout } from './static-words.js';

export interface DecodeResult {
  /** 'ok' | 'no_abi' | 'error: <short reason>' (also in values.decode_status). */
  status: string;
  /** One value per column of the decoder (arg columns null unless status is 'ok'). */
  values: Row;
}

export interface EventDecoder {
  /** The event's arg_* columns in ABI order, then decode_status. Depends only on the signature (and ABI). */
  columns: Column[];
  /** The event definition actually used (the signature's, or the ABI's when the signature lacks `indexed`). */
  event: AbiEvent;
  decode(record: EventRecord): DecodeResult;
}

export interface EventDecoderOptions {
  /** An ABI (loadAbiFile) that supplies indexed markers when the signature has none. */
  abi?: Abi | undefined;
  /** Use the service's `decoded` object first (default true); false: decode locally first. */
  preferService?: boolean | undefined;
  /** Read all-static events straight from the words (default true); false: always viem (benchmarks). */
  fastPath?: boolean | undefined;
}

type Attempt = { values: RowValue[] } | { reason: string } | { noAbi: true } | null;

function viemReason(err: unknown): string {
  const name = (err as { name?: string }).name ?? '';
  switch (name) {
    case 'DecodeLogTopicsMismatch':
      return 'topics do not match the signature';
    case 'DecodeLogDataMismatch':
    case 'AbiDecodingDataSizeTooSmallError':
    case 'PositionOutOfBoundsError':
      return 'data does not match the signature';
    case 'InvalidBytesBooleanError':
      return 'invalid bool in data';
    default:
      return `undecodable log (${name || 'unknown error'})`;
  }
}

function normalised(normalisers: readonly RowNormaliser[], raw: (i: number) => unknown): Attempt {
  const values = new Array<RowValue>(normalisers.length);
  try {
    for (let i = 0; i < normalisers.length; i++) values[i] = (normalisers[i] as RowNormaliser)(raw(i));
  } catch (err) {
    if (err instanceof DecodeValueError) return { reason: err.reason };
    throw err;
  }
  return { values };
}

/** The service's `decoded` object read by the event's inputs (null: the service did not decode it). */
function fromService(record: EventRecord, inputs: readonly AbiParameter[], normalisers: readonly RowNormaliser[]): Attempt {
  const decoded = record.decoded;
  if (!decoded || typeof decoded !== 'object') return null;
  const indexed = isObject(decoded.indexed_params) ? decoded.indexed_params : {};
  const plain = isObject(decoded.non_indexed_params) ? decoded.non_indexed_params : {};
  const keyCount = Object.keys(indexed).length + Object.keys(plain).length;
  // An empty `decoded` is how the service says it could not decode.
  if (keyCount === 0 && inputs.length > 0) return null;
  if (keyCount !== inputs.length) return { reason: 'service decoded params do not match the signature' };
  const raw: unknown[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const param = inputs[i] as AbiParameter;
    const [first, second] = isIndexed(param) ? [indexed, plain] : [plain, indexed];
    let value = lookupParam(first, param.name, i);
    if (value === undefined) value = lookupParam(second, param.name, i);
    if (value === undefined) return { reason: 'service decoded params do not match the signature' };
    raw.push(value);
  }
  return normalised(normalisers, (i) => raw[i]);
}

export function createEventDecoder(sig: ParsedEventSignature, opts: EventDecoderOptions = {}): EventDecoder {
  const event = effectiveEvent(sig, opts.abi);
  const preferService = opts.preferService ?? true;
  const columns = eventDecodeColumns(event);
  const names = columns.slice(0, -1).map((c) => c.name);
  const inputs: readonly AbiParameter[] = event.inputs;
  const normalisers: RowNormaliser[] = inputs.map(compileNormaliser);
  const indexedCount = inputs.filter(isIndexed).length;
  const hasMarkers = indexedCount > 0;
  const layout = opts.fastPath === false ? null : staticLayout(event);
  const topic0 = sig.topic0;
  // Unnamed copy: viem then returns args positionally (ABI order), whatever the names are.
  const positionalAbi: AbiEvent[] = [{ ...event, inputs: inputs.map(({ name: _name, ...rest }) => rest) as AbiEvent['inputs'] }];

  function result(values: RowValue[] | null, status: string): DecodeResult {
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i] as string] = values ? (values[i] as RowValue) : null;
    row.decode_status = status;
    return { status, values: row };
  }

  const serviceDecoded = (record: EventRecord): Attempt => fromService(record, inputs, normalisers);

  function locally(record: EventRecord): Attempt {
    const topics = record.topics;
    if (!hasMarkers && topics.length > 1) return { noAbi: true };
    const data = record.data || '0x';
    if (layout) {
      const values = decodeStaticWords(layout, topics, data);
      if (values) return { values };
    }
    let args: unknown;
    try {
      args = decodeEventLog({ abi: positionalAbi, topics: topics as [Hex, ...Hex[]], data: data as Hex, strict: true }).args;
    } catch (err) {
      return { reason: viemReason(err) };
    }
    const list = Array.isArray(args) ? args : [];
    return normalised(normalisers, (i) => list[i]);
  }

  return {
    columns,
    event,
    decode(record: EventRecord): DecodeResult {
      const topics = record.topics;
      const first = topics[0]?.toLowerCase();
      if (first === undefined) return result(null, 'error: log has no topics');
      if (first !== topic0) return result(null, 'error: topic0 does not match the signature');
      if (hasMarkers && topics.length !== indexedCount + 1) {
        return result(null, `error: log has ${topics.length - 1} indexed topics, signature has ${indexedCount}`);
      }
      const attempts = preferService ? [serviceDecoded, locally] : [locally, serviceDecoded];
      let local: Attempt = null;
      let service: Attempt = null;
      for (const attempt of attempts) {
        const outcome = attempt(record);
        if (outcome && 'values' in outcome) return result(outcome.values, 'ok');
        if (attempt === locally) local = outcome;
        else service = outcome;
      }
      // Local decoding is authoritative about the bytes; the service's reason only when local was impossible.
      if (local && 'reason' in local) return result(null, `error: ${local.reason}`);
      if (service && 'reason' in service) return result(null, `error: ${service.reason}`);
      return result(null, 'no_abi');
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
