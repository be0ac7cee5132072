import { column, type Column, type RowOf, type RowWith } from '../columns/columns.js';
import { EVENT_FIELDS } from '../columns/record-fields.js';
import { BLOCK_COLUMNS, BLOCK_WINDOW_FILTERS, blockSliceAxes, blockTime, pageQuery, sameHex, type Dataset } from './dataset.js';
import type { EventRecord } from '../source/records.js';
import { MAX_PAGE } from '../source/query.js';
import { createHash } from 'node:crypto';
import type { Abi } from 'viem';
import { eventDecodeColumns, snakeCase } from '../decode/columns.js';
import type { EventDecoder } from '../decode/event-decoder.js';
import { effectiveEvent } from '../decode/effective-event.js';
import { parseEventSignature, type ParsedEventSignature } from '../abi/event-signature.js';

/** A contract's events of one signature. */
export interface EventTarget {
  kind: 'contract';
  /** Lowercase 0x contract address. */
  address: string;
  signature: ParsedEventSignature;
  /** Ask the service to decode (decode=true); local decoding fills in when it cannot. */
  decode: boolean;
  decoder: EventDecoder;
}

const [TRANSACTION_HASH, TRANSACTION_INDEX, LOG_INDEX, ADDRESS, DATA] = EVENT_FIELDS;
const EVENT_COLUMNS = [
  ...BLOCK_COLUMNS,
  TRANSACTION_HASH,
  TRANSACTION_INDEX,
  LOG_INDEX,
  ADDRESS,
  column('topic0', 'string', 'Event signature hash'),
  column('topic1', 'string', 'First indexed parameter, 32-byte hex'),
  column('topic2', 'string', 'Second indexed parameter, 32-byte hex'),
  column('topic3', 'string', 'Third indexed parameter, 32-byte hex'),
  DATA,
  column('event_signature', 'string', 'Canonical event signature, e.g. Transfer(address,address,uint256)', false),
] as const;

/** A row of an events table: its declared columns, then the decoder's. */
type EventRow = RowWith<typeof EVENT_COLUMNS>;

/** The table of an event's rows before its schema is known (aggregates name theirs after it). */
export function eventTableName(sig: ParsedEventSignature): string {
  return `events_${snakeCase(sig.name) || 'anonymous'}_${sig.topic0.slice(2, 10)}`;
}

/**
 * One table per schema: events_<name>_<topic0 prefix>_<hash of the decoded columns>. ERC-20 and
 * ERC-721 Transfer share topic0 but not their columns (value vs indexed tokenId), so they must
 * not share a table.
 */
export function eventSchemaTableName(sig: ParsedEventSignature, argColumns: readonly Column[]): string {
  const schema = argColumns.map((c) => `${c.name}:${c.type}`).join(',');
  return `${eventTableName(sig)}_${createHash('sha256').update(schema).digest('hex').slice(0, 6)}`;
}

/** The table a job's event signature (and optional ABI) exports to. */
export function eventTableForSignature(signature: string, abi?: Abi): string {
  const sig = parseEventSignature(signature);
  return eventSchemaTableName(sig, eventDecodeColumns(effectiveEvent(sig, abi)));
}

/** An event among those of its chain and contract. */
const eventRowKey = (r: EventRecord): string => `${r.transaction_hash}:${r.log_index}`;

function eventItemId(r: EventRecord): string {
  return `${r.chain_id}:${eventRowKey(r)}`;
}

export const eventsDataset: Dataset<EventTarget, EventRecord, 'events', 'contract'> = {
  name: 'events',
  capabilities: {
    targetKinds: ['contract'],
    defaultFor: ['contract'],
    extent: 'ranged',
    rangeAxes: ['block', 'time'],
    pageCap: MAX_PAGE,
    filters: 'list-route',
  },
  async buildTarget(unit, options) {
    const abi = unit.abi ? await options.abi(unit.abi) : undefined;
    const signature = parseEventSignature(unit.event.signature);
    const { createEventDecoder } = await import('../decode/event-decoder.js');
    return {
      kind: 'contract',
      address: unit.contract.toLowerCase(),
      signature,
      decode: options.decode,
      decoder: createEventDecoder(signature, { abi, preferService: options.decode }),
    };
  },
  tableName: (target) => eventSchemaTableName(target.signature, target.decoder.columns),
  columns: (target) => [...EVENT_COLUMNS, ...target.decoder.columns],
  // The decoder's columns are a function of the signature (and ABI): no decoder built, viem not loaded.
  async tableOf(unit, options) {
    const abi = unit.abi ? await options.abi(unit.abi) : undefined;
    const signature = parseEventSignature(unit.event.signature);
    const decoded = eventDecodeColumns(effectiveEvent(signature, abi));
    return { name: eventSchemaTableName(signature, decoded), columns: [...EVENT_COLUMNS, ...decoded] };
  },
  sortKey: ['chain_id', 'block_number', 'log_index'],
  targetKey: (target) => `${target.address}_${target.signature.topic0.slice(2, 10)}`,
  collection: {
    kind: 'paged',
    windowFilters: BLOCK_WINDOW_FILTERS,
    recount: {
      target: (unit) => {
        if (unit.kind !== 'contract') throw new TypeError(`events count a contract's events, not a ${unit.kind} target`);
        return { address: unit.contract.toLowerCase(), human: parseEventSignature(unit.event.signature).human };
      },
      aggregate: async (client, target: { address: string; human: string }, q) =>
        (await client.contractEvents(target.address, target.human, q)).aggregations ?? [],
    },
    sliceAxes: (axis) => blockSliceAxes(axis, { field: 'log_index', value: (r: EventRecord) => r.log_index }),
    async fetchPage(client, target, req) {
      const response = await client.contractEvents(target.address, target.signature.human, pageQuery(req, target.decode), req.held);
      return response.data;
    },
    foreignReason(r, target) {
      if (!sameHex(r.address, target.address)) return 'other_contract';
      return sameHex(r.topics[0], target.signature.topic0) ? null : 'other_event';
    },
  },
  position: (r) => r,
  chainId: (r) => r.chain_id,
  itemId: eventItemId,
  rowKey: eventRowKey,
  toRow(r, target): EventRow {
    // One literal with every column in declared order, as transactions' toRow.
    const row: RowOf<typeof EVENT_COLUMNS> = {
      item_id: eventItemId(r),
      chain_id: r.chain_id,
      block_number: r.block_number,
      block_timestamp: r.block_timestamp,
      block_time: blockTime(r.block_timestamp),
      block_hash: r.block_hash,
      transaction_hash: r.transaction_hash,
      transaction_index: r.transaction_index,
      log_index: r.log_index,
      address: r.address,
      topic0: r.topics[0] ?? null,
      topic1: r.topics[1] ?? null,
      topic2: r.topics[2] ?? null,
      topic3: r.topics[3] ?? null,
      data: r.data,
      event_signature: target.signature.canonical,
    };
    Object.assign(row, target.decoder.decode(r).values);
    return row;
  },
};
