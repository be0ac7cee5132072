import { describe, expect, it } from 'vitest';
import type { EventRecord, TransactionRecord } from '../../src/source/records.js';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 8_000, seed: 11 });
const OPS = ['', '_gte', '_gt', '_lte', '_lt'] as const;

function cmp(a: bigint, b: bigint, op: (typeof OPS)[number]): boolean {
  switch (op) {
    case '':
      return a === b;
    case '_gte':
      return a >= b;
    case '_gt':
      return a > b;
    case '_lte':
      return a <= b;
    case '_lt':
      return a < b;
  }
}

async function allPages(url: string): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 0; page <= 20; page++) {
    const { status, body } = await getJson(`${url}&limit=1000&page=${page}`);
    expect(status, JSON.stringify(body)).toBe(200);
    rows.push(...body.data);
    if (body.data.length < 1000) return rows;
  }
  throw new Error('more than 20 pages');
}

describe('filters on wallet transactions', () => {
  const numeric = ['block_number', 'block_timestamp', 'transaction_index', 'value', 'gas_price', 'gas'] as const;
  for (const column of numeric) {
    it(`filter_${column} with =, _gte, _gt, _lte, _lt compares as a number (uint256 as BigInt)`, async () => {
      const wallet = sandbox.data.wallets[1]!;
      const truth = [...sandbox.data.transactions(1)].filter((t) => t.from_address === wallet.address || t.to_address === wallet.address);
      // the median distinct value: some rows below, some above, some equal
      const values = [...new Set(truth.map((t) => BigInt((t as any)[column])))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const pivot = values[Math.floor(values.length / 2)]!;
      for (const op of OPS) {
        const rows = await allPages(
          `${sandbox.url}/wallets/${wallet.address}/transactions?chain_id=1&sort_by=block_number&filter_${column}${op}=${pivot.toString()}`,
        );
        const expected = truth.filter((t) => cmp(BigInt((t as any)[column]), pivot, op));
        expect(
          rows.map((r) => r.hash),
          `${column}${op}`,
        ).toEqual(expected.map((t) => t.hash));
        if (op !== '') {
          expect(expected.length).toBeGreaterThan(0);
          expect(expected.length).toBeLessThan(truth.length);
        }
      }
    });
  }

  it('compares uint256 values exactly beyond 2^53', async () => {
    const wallet = sandbox.data.wallets[0]!;
    const truth = [...sandbox.data.transactions(8453)].filter((t) => t.from_address === wallet.address || t.to_address === wallet.address);
    const big = truth.find((t) => BigInt(t.value) > 2n ** 70n && !t.value.endsWith('0')) ?? truth.find((t) => BigInt(t.value) > 2n ** 70n)!;
    // one wei more than a real value: a double cannot tell them apart, BigInt can
    const plusOne = (BigInt(big.value) + 1n).toString();
    const eq = await allPages(`${sandbox.url}/wallets/${wallet.address}/transactions?chain_id=8453&filter_value=${plusOne}`);
    expect(eq.filter((r) => r.hash === big.hash)).toHaveLength(0);
    const gte = await allPages(`${sandbox.url}/wallets/${wallet.address}/transactions?chain_id=8453&filter_value_gte=${big.value}`);
    expect(gte.map((r) => r.hash)).toContain(big.hash);
    const gt = await allPages(`${sandbox.url}/wallets/${wallet.address}/transactions?chain_id=8453&filter_value_gt=${big.value}`);
    expect(gt.map((r) => r.hash)).not.toContain(big.hash);
  });

  for (const column of ['hash', 'block_hash', 'function_selector'] as const) {
    it(`filter_${column} matches by equality`, async () => {
      const wallet = sandbox.data.wallets[2]!;
      const truth = [...sandbox.data.transactions(42161)].filter(
        (t) => t.from_address === wallet.address || t.to_address === wallet.address,
      );
      const pick = truth.find((t) => t.function_selector !== null)!;
      const value = (pick as any)[column] as string;
      const rows = await allPages(
        `${sandbox.url}/wallets/${wallet.address}/transactions?chain_id=42161&filter_${column}=${value.toUpperCase().replace('0X', '0x')}`,
      );
      const expected = truth.filter((t: TransactionRecord) => (t as any)[column] === value);
      expect(expected.length).toBeGreaterThan(0);
      expect(rows.map((r) => r.hash)).toEqual(expected.map((t) => t.hash));
    });
  }
});

describe('filters on contract events', () => {
  const sig = encodeURIComponent('Transfer(address indexed from, address indexed to, uint256 value)');
  const numeric = ['block_number', 'block_timestamp', 'transaction_index', 'log_index'] as const;
  const tokenOf = () => sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
  const truthOf = () => {
    const token = tokenOf();
    return [...sandbox.data.logs(1)].filter(
      (l) => l.address === token.address && l.topics[0] === '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
    );
  };
  const key = (e: EventRecord) => `${e.transaction_hash}:${e.log_index}`;

  for (const column of numeric) {
    it(`filter_${column} with every operator`, async () => {
      const truth = truthOf();
      const values = truth.map((l) => (l as any)[column] as number).sort((a, b) => a - b);
      const pivot = values[Math.floor(values.length / 2)]!;
      for (const op of OPS) {
        const rows = await allPages(
          `${sandbox.url}/events/${tokenOf().address}/${sig}?chain_id=1&sort_by=block_number&filter_${column}${op}=${pivot}`,
        );
        const expected = truth.filter((l) => cmp(BigInt((l as any)[column]), BigInt(pivot), op));
        expect(rows.map(key), `${column}${op}`).toEqual(expected.map(key));
      }
    });
  }

  it('filter_transaction_hash, filter_block_hash and filter_topic_1..2 match by equality', async () => {
    const truth = truthOf();
    const pick = truth[Math.floor(truth.length / 3)]!;
    const cases: [string, (l: EventRecord) => boolean][] = [
      [`filter_transaction_hash=${pick.transaction_hash}`, (l) => l.transaction_hash === pick.transaction_hash],
      [`filter_block_hash=${pick.block_hash}`, (l) => l.block_hash === pick.block_hash],
      [`filter_topic_1=${pick.topics[1]}`, (l) => l.topics[1] === pick.topics[1]],
      [`filter_topic_2=${pick.topics[2]}`, (l) => l.topics[2] === pick.topics[2]],
      [
        `filter_topic_1=${pick.topics[1]}&filter_topic_2=${pick.topics[2]}`,
        (l) => l.topics[1] === pick.topics[1] && l.topics[2] === pick.topics[2],
      ],
    ];
    for (const [q, pred] of cases) {
      const rows = await allPages(`${sandbox.url}/events/${tokenOf().address}/${sig}?chain_id=1&${q}`);
      const expected = truth.filter(pred);
      expect(expected.length).toBeGreaterThan(0);
      expect(rows.map(key), q).toEqual(expected.map(key));
    }
  });

  it('filter_topic_3 on ERC-721 Transfer selects one token id', async () => {
    const nft = sandbox.data.contracts.find((c) => c.kind === 'erc721' && c.chainId === 8453)!;
    const nftSig = encodeURIComponent('Transfer(address indexed from, address indexed to, uint256 indexed tokenId)');
    const truth = [...sandbox.data.logs(8453)].filter((l) => l.address === nft.address);
    const topic3 = truth[truth.length - 1]!.topics[3]!;
    const rows = await allPages(`${sandbox.url}/events/${nft.address}/${nftSig}?chain_id=8453&filter_topic_3=${topic3}`);
    expect(rows.map(key)).toEqual(truth.filter((l) => l.topics[3] === topic3).map(key));
  });
});
