import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamedWindow } from '../helpers/streamed-window.js';
import {
  AggregateWindowTooDenseError,
  aggregatesDataset,
  createAggregateTarget,
  type AggregateRecord,
  type AggregateTarget,
} from '../../src/datasets/aggregates.js';
import type { WindowRequest } from '../../src/datasets/dataset.js';
import { InsightClient } from '../../src/source/client.js';
import type { ListQuery } from '../../src/source/query.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42 });
let client: InsightClient;
beforeAll(() => {
  client = new InsightClient({ baseUrl: sandbox.url, maxAttempts: 1 });
});
afterAll(async () => {
  await client.close();
});

const DAY_START = 1_706_745_600; // 2024-02-01
const DAY = 86_400;

/** Streams one window like the exporter does, recording every page asked for. */
async function stream(target: AggregateTarget, req: Omit<WindowRequest, 'filters'>) {
  const pages: { page: number; limit: number; start: number; end: number }[] = [];
  const original = client.walletTransactions.bind(client);
  const spy = Object.assign(Object.create(client) as InsightClient, {
    walletTransactions: (wallet: string, q: ListQuery) => {
      pages.push({
        page: q.page!,
        limit: q.limit!,
        start: Number(q.filters!.filter_block_timestamp_gte),
        end: Number(q.filters!.filter_block_timestamp_lt),
      });
      return original(wallet, q);
    },
  });
  const batches: { chainId: number; records?: AggregateRecord[]; done?: true }[] = [];
  for await (const b of streamedWindow(aggregatesDataset, spy, target, { ...req, filters: {} })) batches.push(b as never);
  return { pages, batches, records: batches.flatMap((b) => b.records ?? []) };
}

describe('aggregate windows are proven by a short answer', () => {
  it('halves a window whose answer is full, until every part comes back short; the rows equal one grouping per part', async () => {
    const alice = sandbox.data.wallets[0]!;
    const target = createAggregateTarget({
      source: { kind: 'wallet', address: alice.address },
      groupBy: ['block_number'],
      aggregate: ['count() as n'],
    });
    const limit = 10;
    const { pages, batches, records } = await stream(target, {
      chainIds: [1],
      axis: 'time',
      start: DAY_START,
      end: DAY_START + DAY,
      limit,
    });

    const txs = [...sandbox.data.transactions(1)].filter(
      (t) =>
        (t.from_address === alice.address || t.to_address === alice.address) &&
        t.block_timestamp >= DAY_START &&
        t.block_timestamp < DAY_START + DAY,
    );
    const blocks = new Map<number, number>();
    for (const t of txs) blocks.set(t.block_number, (blocks.get(t.block_number) ?? 0) + 1);
    expect(blocks.size).toBeGreaterThan(4 * limit * 4); // the day needs several halvings

    // Only page 0 is asked for (groups have no order to page through); the window was split into contiguous parts covering it.
    expect(pages.every((p) => p.page === 0)).toBe(true);
    const parts = [...new Map(records.map((r) => [`${r.window_start}_${r.window_end}`, [r.window_start, r.window_end] as const])).values()];
    expect(parts.length).toBeGreaterThan(4);
    expect(parts[0]![0]).toBe(DAY_START);
    expect(parts.at(-1)![1]).toBe(DAY_START + DAY);
    for (let i = 1; i < parts.length; i++) expect(parts[i]![0]).toBeGreaterThanOrEqual(parts[i - 1]![1]);
    // Each part came back short; rows of a window that was halved are never emitted (they would
    // repeat block numbers below).
    for (const [start] of parts) expect(records.filter((r) => r.window_start === start).length).toBeLessThan(limit);

    // The union of the parts is the day's grouping (block numbers never straddle a time split).
    const got = new Map(records.map((r) => [Number(r.values.block_number), Number(r.values.n)]));
    expect(records).toHaveLength(blocks.size);
    expect(got).toEqual(blocks);
    const rows = records.map((r) => aggregatesDataset.toRow(r, target));
    expect(new Set(rows.map((r) => r.item_id)).size).toBe(rows.length);
    expect(batches.at(-1)).toEqual({ chainId: 1, done: true });
  });

  it('a window of one second that still does not fit is an error, never a truncated window', async () => {
    const alice = sandbox.data.wallets[0]!;
    const tx = [...sandbox.data.transactions(1)].find((t) => t.from_address === alice.address)!;
    const target = createAggregateTarget({
      source: { kind: 'wallet', address: alice.address },
      groupBy: ['hash'],
      aggregate: ['count() as n'],
    });
    const err = await stream(target, {
      chainIds: [1],
      axis: 'time',
      start: tx.block_timestamp,
      end: tx.block_timestamp + 4,
      limit: 1,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateWindowTooDenseError);
  });

  it('a window that fits on its first page is one request and one part', async () => {
    const alice = sandbox.data.wallets[0]!;
    const target = createAggregateTarget({
      source: { kind: 'wallet', address: alice.address },
      groupBy: ['status'],
      aggregate: ['count()'],
    });
    const { pages, records } = await stream(target, {
      chainIds: [1, 8453],
      axis: 'time',
      start: DAY_START,
      end: DAY_START + DAY,
      limit: 1000,
    });
    expect(pages).toHaveLength(2); // one per chain: aggregations are not split by chain on the wire
    expect(new Set(records.map((r) => `${r.chain_id}:${r.window_start}_${r.window_end}`))).toEqual(
      new Set([`1:${DAY_START}_${DAY_START + DAY}`, `8453:${DAY_START}_${DAY_START + DAY}`]),
    );
  });
});
