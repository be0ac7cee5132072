/**
 * The sandbox's `goValues` / `goAggregations` knobs (`--profile indexer`) put on the wire what the
 * open-source indexer sends; the default profile keeps the contract's shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RICH_EVENT_SIGNATURE, startSandbox, type Sandbox } from '@insight-export/sandbox';
import { SANDBOX_PROFILES } from '@insight-export/sandbox';

let contract: Sandbox;
let indexer: Sandbox;
beforeAll(async () => {
  contract = await startSandbox({ seed: 9, transactions: 4_000, richContract: true });
  indexer = await startSandbox({ seed: 9, transactions: 4_000, richContract: true, ...SANDBOX_PROFILES.indexer });
});
afterAll(async () => {
  await contract?.close();
  await indexer?.close();
});

const text = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
};
const rich = () => contract.data.contracts.find((c) => c.kind === 'rich' && c.chainId === 1)!;
const eventsUrl = (s: Sandbox, query: string) =>
  `${s.url}/events/${rich().address}/${encodeURIComponent(RICH_EVENT_SIGNATURE)}?chain_id=1&${query}`;

describe('goValues', () => {
  it('writes big integers in tuples and fixed arrays as bare JSON numbers beyond 2^53', async () => {
    const { text: body } = await text(eventsUrl(indexer, 'limit=50&decode=true'));
    const bare = [...body.matchAll(/"amount":(\d+)/g)].map((m) => BigInt(m[1]!));
    expect(bare.length).toBeGreaterThan(0);
    expect(bare.some((v) => v > 2n ** 53n)).toBe(true);
    expect((await text(eventsUrl(contract, 'limit=50&decode=true'))).text).not.toMatch(/"amount":\d/);
  });

  it('decodes events without decode=true; the contract profile only when asked', async () => {
    const go = JSON.parse((await text(eventsUrl(indexer, 'limit=5'))).text);
    expect(go.data.every((r: any) => r.decoded?.name === 'Settled')).toBe(true);
    const plain = JSON.parse((await text(eventsUrl(contract, 'limit=5'))).text);
    expect(plain.data.every((r: any) => r.decoded === undefined)).toBe(true);
  });

  it('sends {"name":"","signature":"","inputs":null} for a transaction it cannot decode, base64 bytes and sorted keys otherwise', async () => {
    const alice = contract.data.wallets[0]!.address;
    const { data } = JSON.parse((await text(`${indexer.url}/wallets/${alice}/transactions?chain_id=1&limit=1000&decode=true`)).text);
    const native = data.find((r: any) => r.data === '0x');
    expect(native.decoded).toEqual({ name: '', signature: '', inputs: null });
    const erc1155 = data.find(
      (r: any) => r.decoded?.signature === 'safeTransferFrom(address,address,uint256,uint256,bytes)' && r.data.length > 10 + 64 * 6,
    );
    expect(Object.keys(erc1155.decoded.inputs)).toEqual(['data', 'from', 'id', 'to', 'value']);
    expect(erc1155.decoded.inputs.data).not.toMatch(/^0x/);
    expect(`0x${Buffer.from(erc1155.decoded.inputs.data, 'base64').toString('hex')}`).toBe(
      contract.data.transactionArgs(1, erc1155.hash)!.args.data,
    );
  });
});

describe('goAggregations', () => {
  it('sends DateTime as RFC 3339, UInt256 quoted, count() as a number', async () => {
    const q =
      'group_by=block_timestamp&group_by=toDate(block_timestamp) as day&aggregate=count() as n&aggregate=sum(block_number) as b&limit=5';
    const { aggregations } = JSON.parse((await text(eventsUrl(indexer, q))).text);
    for (const row of aggregations) {
      expect(row.block_timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(row.day).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/);
      expect(typeof row.n).toBe('number');
      expect(row.b).toMatch(/^\d+$/);
    }
    const plain = JSON.parse((await text(eventsUrl(contract, q))).text).aggregations;
    expect(typeof plain[0].block_timestamp).toBe('number');
  });

  it('answers an ungrouped aggregate over no rows with one row of zeros (the contract profile: no row)', async () => {
    const q = 'filter_block_number_lt=5&aggregate=count()&aggregate=sum(block_number)&aggregate=max(block_timestamp)';
    expect(JSON.parse((await text(eventsUrl(indexer, q))).text).aggregations).toEqual([
      { 'count()': 0, 'sum(block_number)': '0', 'max(block_timestamp)': '1970-01-01T00:00:00Z' },
    ]);
    expect(JSON.parse((await text(eventsUrl(contract, q))).text).aggregations).toEqual([]);
  });

  it('wallet route: one row per UNION half for an aggregate, a 500 for group_by with an aggregate', async () => {
    const alice = contract.data.wallets[0]!.address;
    const base = `/wallets/${alice}/transactions?chain_id=1`;
    const halves = JSON.parse((await text(`${indexer.url}${base}&aggregate=count() as n`)).text).aggregations;
    const total = JSON.parse((await text(`${contract.url}${base}&aggregate=count() as n`)).text).aggregations[0].n;
    const self = [...contract.data.transactions(1)].filter((t) => t.from_address === alice && t.to_address === alice).length;
    expect(halves).toHaveLength(2);
    expect(halves[0].n + halves[1].n).toBe(total + self);
    expect((await text(`${indexer.url}${base}&group_by=status&aggregate=count()`)).status).toBe(500);
  });
});

describe('--profile indexer', () => {
  it('includes every value knob', () => {
    expect(SANDBOX_PROFILES.indexer).toMatchObject({ goValues: true, goAggregations: true });
  });
});
