import { describe, expect, it } from 'vitest';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 6_000, seed: 13 });

const day = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);

describe('group_by and aggregate', () => {
  it('groups wallet transactions by chain and UTC day with count, exact uint256 sum, avg, min, max', async () => {
    const alice = sandbox.data.wallets[0]!;
    const qs = [
      'group_by=chain_id',
      'group_by=toStartOfDay(toDateTime(block_timestamp)) as day',
      'aggregate=count() as n',
      'aggregate=sum(value)',
      'aggregate=avg(gas_used) as avg_gas',
      'aggregate=min(block_number) as first_block',
      'aggregate=max(gas_price) as max_price',
      'limit=1000',
    ]
      .map((p) => p.replace(/ /g, '%20'))
      .join('&');
    const { status, body } = await getJson(`${sandbox.url}/wallets/${alice.address}/transactions?${qs}`);
    expect(status).toBe(200);
    expect(body.data).toBeUndefined();
    // recompute from the raw rows
    const groups = new Map<string, any[]>();
    for (const c of sandbox.data.chains) {
      for (const t of sandbox.data.transactions(c.chainId)) {
        if (t.from_address !== alice.address && t.to_address !== alice.address) continue;
        const k = `${t.chain_id}|${day(t.block_timestamp)}`;
        groups.set(k, [...(groups.get(k) ?? []), t]);
      }
    }
    const expected = [...groups.entries()]
      .sort(([a], [b]) => {
        const [ca, da] = a.split('|');
        const [cb, db] = b.split('|');
        return Number(ca) - Number(cb) || (da! < db! ? -1 : 1);
      })
      .map(([k, rows]) => {
        const [chain, d] = k.split('|');
        return {
          chain_id: chain,
          day: `${d} 00:00:00`,
          n: rows.length,
          'sum(value)': rows.reduce((a, t) => a + BigInt(t.value), 0n).toString(),
          avg_gas: rows.reduce((a, t) => a + t.gas_used, 0) / rows.length,
          first_block: Math.min(...rows.map((t) => t.block_number)),
          max_price: rows
            .map((t) => BigInt(t.gas_price))
            .reduce((a, b) => (a > b ? a : b))
            .toString(),
        };
      });
    expect(expected.length).toBeGreaterThanOrEqual(9);
    expect(body.aggregations).toHaveLength(expected.length);
    body.aggregations.forEach((row: any, i: number) => {
      const e = expected[i]!;
      expect({ ...row, avg_gas: undefined }).toEqual({ ...e, avg_gas: undefined });
      expect(row.avg_gas).toBeCloseTo(e.avg_gas, 6);
    });
    expect(body.meta.total_items).toBe(expected.length);
  });

  it('pages over group rows with limit/page and keys raw expressions without alias', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
    const sig = encodeURIComponent('Transfer(address indexed from, address indexed to, uint256 value)');
    const base = `${sandbox.url}/events/${token.address}/${sig}?chain_id=1&group_by=toDate(block_timestamp)&aggregate=count()&limit=2`;
    const truth = new Map<string, number>();
    for (const l of sandbox.data.logs(1)) {
      if (l.address === token.address && l.topics[0] === '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef') {
        truth.set(day(l.block_timestamp), (truth.get(day(l.block_timestamp)) ?? 0) + 1);
      }
    }
    const rows: any[] = [];
    for (let page = 0; ; page++) {
      const { body } = await getJson(`${base}&page=${page}`);
      rows.push(...body.aggregations);
      if (body.aggregations.length < 2) break;
    }
    expect(rows).toEqual([...truth.entries()].sort().map(([d, n]) => ({ 'toDate(block_timestamp)': d, 'count()': n })));
  });

  it('aggregate without group_by gives one row over the filtered rows', async () => {
    const bob = sandbox.data.wallets[1]!;
    const { body } = await getJson(
      `${sandbox.url}/wallets/${bob.address}/transactions?chain_id=8453&filter_status=0&aggregate=count()%20as%20failed&aggregate=sum(gas_used)%20as%20gas`,
    );
    const failed = [...sandbox.data.transactions(8453)].filter(
      (t) => (t.from_address === bob.address || t.to_address === bob.address) && t.status === 0,
    );
    expect(body.aggregations).toEqual([{ failed: failed.length, gas: failed.reduce((a, t) => a + t.gas_used!, 0) }]);
  });
});
