import { describe, expect, it } from 'vitest';
import {
  AggregateExpressionError,
  AggregateValueError,
  aggregatesDataset,
  createAggregateTarget,
  type AggregateRecord,
} from '../../src/datasets/aggregates.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';

const WALLET = { kind: 'wallet' as const, address: '0x344940aef33a4e9915b793dfe282f3727eff9869' };
const TRANSFER = {
  kind: 'contract' as const,
  address: '0x77f5e148a71be22cf4f3a1816626b240547b6302',
  signature: parseEventSignature('Transfer(address indexed from, address indexed to, uint256 value)'),
};

const record = (values: AggregateRecord['values']): AggregateRecord => ({
  chain_id: 8453,
  window_start: 1_706_745_600,
  window_end: 1_706_832_000,
  window_start_time: 1_706_745_600,
  values,
});

describe('aggregates columns', () => {
  it('are named by alias or sanitised expression and typed from the expression', () => {
    const t = createAggregateTarget({
      source: WALLET,
      groupBy: ['chain_id', 'toDate(block_timestamp) as day', 'toStartOfDay(toDateTime(block_timestamp))', 'from_address', 'status'],
      aggregate: [
        'count()',
        'count(*) as n',
        'sum(value)',
        'sum(gas_used) as gas',
        'avg(gas_used)',
        'min(block_number)',
        'max(gas_price) as top',
        'uniq(to_address)',
      ],
    });
    expect(t.columns.map((c) => [c.name, c.type])).toEqual([
      ['item_id', 'string'],
      ['chain_id', 'int64'],
      ['window_start', 'int64'],
      ['window_end', 'int64'],
      ['window_start_time', 'timestamp'],
      ['day', 'date'],
      ['to_start_of_day_to_date_time_block_timestamp', 'timestamp'],
      ['from_address', 'string'],
      ['status', 'int32'],
      ['count', 'int64'],
      ['n', 'int64'],
      ['sum_value', 'uint256'],
      ['gas', 'int64'],
      ['avg_gas_used', 'string'],
      ['min_block_number', 'int64'],
      ['top', 'uint256'],
      ['uniq_to_address', 'string'],
    ]);
  });

  it('rows take the values by key, normalise wire types and never repeat chain_id', () => {
    const t = createAggregateTarget({
      source: WALLET,
      groupBy: ['chain_id', 'toDate(block_timestamp) as day', 'toStartOfDay(block_timestamp) as midnight'],
      aggregate: ['count() as n', 'sum(value)', 'avg(gas_used) as avg_gas', 'max(gas_price)'],
    });
    const row = aggregatesDataset.toRow(
      record({
        chain_id: '8453',
        day: '2024-02-01',
        midnight: '2024-02-01 00:00:00',
        n: '12',
        'sum( value )': '000123',
        avg_gas: 21000.5,
        'max(gas_price)': 99,
      }),
      t,
    );
    expect(row).toEqual({
      item_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      chain_id: 8453,
      window_start: 1_706_745_600,
      window_end: 1_706_832_000,
      window_start_time: '2024-02-01T00:00:00Z',
      day: '2024-02-01',
      midnight: '2024-02-01T00:00:00Z',
      n: 12,
      sum_value: '123',
      avg_gas: '21000.5',
      max_gas_price: '99',
    });
    expect(aggregatesDataset.partitionDate!(row)).toBe('2024-02-01');
    // A different group value or window is a different item.
    const other = aggregatesDataset.toRow(record({ chain_id: '8453', day: '2024-02-02', midnight: null, n: 1 }), t);
    expect(other.item_id).not.toBe(row.item_id);
    expect(other.midnight).toBeNull();
  });

  it('a value that does not fit its column is a typed error naming the column', () => {
    const t = createAggregateTarget({ source: WALLET, aggregate: ['count() as n'], groupBy: [] });
    expect(() => aggregatesDataset.toRow(record({ n: '1.5' }), t)).toThrowError(AggregateValueError);
    expect(() => aggregatesDataset.toRow(record({ n: '1.5' }), t)).toThrowError(/aggregate column "n" \(int64\)/);
  });

  it('tables: one per source and schema; event sources have their own columns', () => {
    const a = createAggregateTarget({ source: WALLET, groupBy: [], aggregate: ['count() as n'] });
    const b = createAggregateTarget({ source: WALLET, groupBy: [], aggregate: ['count() as n'], filters: { filter_value_gte: '1' } });
    const c = createAggregateTarget({ source: WALLET, groupBy: [], aggregate: ['count() as m'] });
    expect(aggregatesDataset.tableName(a)).toMatch(/^aggregates_transactions_[0-9a-f]{8}$/);
    expect(aggregatesDataset.tableName(b)).toBe(aggregatesDataset.tableName(a));
    expect(aggregatesDataset.tableName(c)).not.toBe(aggregatesDataset.tableName(a));
    expect(b.queryKey).not.toBe(a.queryKey);
    const e = createAggregateTarget({ source: TRANSFER, groupBy: ['topic_1 as sender'], aggregate: ['max(log_index)'] });
    expect(aggregatesDataset.tableName(e)).toMatch(/^aggregates_events_transfer_ddf252ad_[0-9a-f]{8}$/);
    expect(aggregatesDataset.targetKey(e)).toBe(`${TRANSFER.address}_ddf252ad`);
    expect(e.columns.slice(5).map((col) => [col.name, col.type])).toEqual([
      ['sender', 'string'],
      ['max_log_index', 'int64'],
    ]);
  });

  it('refuses unknown columns, sum of text, clashing names and empty specs, naming the job field', () => {
    const make =
      (groupBy: string[], aggregate: string[], source: typeof WALLET | typeof TRANSFER = WALLET) =>
      () =>
        createAggregateTarget({ source, groupBy, aggregate, jobFile: 'jobs/x.yaml', targetLabel: 'targets[2] (wallet transactions)' });
    expect(make([], ['sum(gas_usd)'])).toThrowError(AggregateExpressionError);
    expect(make([], ['sum(gas_usd)'])).toThrowError(
      /Unknown column "gas_usd"[\s\S]*jobs\/x\.yaml aggregates\.aggregate\[0\], applied to targets\[2\]/,
    );
    expect(make([], ['sum(gas_used)'], TRANSFER)).toThrowError(/Unknown column "gas_used"[\s\S]*Event columns: chain_id/);
    expect(make([], ['sum(from_address)'])).toThrowError(/sum\(\) needs a numeric column/);
    expect(make([], ['avg()'])).toThrowError(/avg\(\) needs a column/);
    expect(make(['status as n'], ['count() as n'])).toThrowError(/Column name "n" of "count\(\) as n" is already used by "status as n"/);
    expect(make(['block_number as window_start'], [])).toThrowError(/already used by a column every aggregates row has/);
    expect(make([], [])).toThrowError(/needs group_by and\/or aggregate/);
    expect(make(['toDate(block_time) as day'], [])).toThrowError(/Unknown column "block_time"/);
  });
});
