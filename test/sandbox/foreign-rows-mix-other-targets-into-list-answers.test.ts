import { describe, expect, it } from 'vitest';
import { listQuery, type Sandbox } from '@insight-export/sandbox';
import { getJson } from '../helpers/sandbox.js';
import { ids, withSandbox } from '../helpers/knob-sandbox.js';

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TRANSFER_TOPIC0 = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** The own rows of an answer are in `truth`; a foreign one sits at the position of the row before it. */
function split(rows: any[], truth: Set<string>): { own: any[]; foreign: { row: any; after: any }[] } {
  const own: any[] = [];
  const foreign: { row: any; after: any }[] = [];
  rows.forEach((row, i) => {
    if (truth.has(ids([row])[0]!)) own.push(row);
    else foreign.push({ row, after: rows[i - 1] });
  });
  return { own, foreign };
}

async function walletPage(s: Sandbox, wallet: string, q: string): Promise<any[]> {
  const { status, body } = await getJson(`${s.url}/wallets/${wallet}/transactions?sort_by=block_number&${q}`);
  expect(status).toBe(200);
  return body.data;
}

describe('foreignRows: rows of another wallet, contract, event or chain mixed into list answers', () => {
  it('wallet route: after some rows a row at the same position that is not the wallet’s or not of a chain asked for; counted by kind', async () => {
    await withSandbox({ foreignRows: 0.2 }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const range = 'filter_block_number_gte=0&filter_block_number_lt=100000000';
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1, 8453] }));
      const rows = await walletPage(s, alice, `chain_id=1&chain_id=8453&limit=1000&${range}`);
      const { own, foreign } = split(rows, new Set(ids(truth)));
      // No own row lost while the chain's part is under the limit.
      expect(ids(own)).toEqual(ids(truth.filter((t) => rows.some((r) => r.chain_id === String(t.chain_id)))));
      expect(foreign.length).toBeGreaterThan(own.length * 0.1);
      const kinds = { other_wallet: 0, other_chain: 0 };
      for (const { row, after } of foreign) {
        expect([row.block_number, row.transaction_index, row.block_timestamp]).toEqual([
          after.block_number,
          after.transaction_index,
          after.block_timestamp,
        ]);
        if (['1', '8453'].includes(row.chain_id)) {
          expect([row.from_address, row.to_address]).not.toContain(alice);
          kinds.other_wallet++;
        } else kinds.other_chain++;
      }
      expect(kinds.other_wallet).toBeGreaterThan(0);
      expect(kinds.other_chain).toBeGreaterThan(0);
      expect(s.stats().foreignRowsSent).toEqual(kinds);
    });
  });

  it('events route: rows of another contract or event (topic0) or chain, inside the block range asked for', async () => {
    await withSandbox({ foreignRows: 0.3 }, async (s) => {
      const [token, truth] = s.data.contracts
        .filter((c) => c.kind === 'erc20' && c.chainId === 1)
        .map((c) => [c, s.data.allContractEvents(c.address, TRANSFER, listQuery({ chainIds: [1] }))] as const)
        .sort((a, b) => b[1].length - a[1].length)[0]!;
      expect(truth.length).toBeGreaterThan(40);
      const [lo, hi] = [truth[10]!.block_number, truth[truth.length - 10]!.block_number];
      const { body } = await getJson(
        `${s.url}/events/${token.address}/${encodeURIComponent(TRANSFER)}?chain_id=1&sort_by=block_number&limit=1000` +
          `&filter_block_number_gte=${lo}&filter_block_number_lt=${hi}`,
      );
      const { own, foreign } = split(body.data, new Set(ids(truth)));
      expect(ids(own)).toEqual(ids(truth.filter((e) => e.block_number >= lo && e.block_number < hi)));
      const kinds: Record<string, number> = {};
      for (const { row } of foreign) {
        expect(row.block_number).toBeGreaterThanOrEqual(lo);
        expect(row.block_number).toBeLessThan(hi);
        const kind =
          row.chain_id !== '1'
            ? 'other_chain'
            : row.address !== token.address
              ? 'other_contract'
              : row.topics[0] !== TRANSFER_TOPIC0
                ? 'other_event'
                : 'none';
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      expect(Object.keys(kinds).sort()).toEqual(['other_chain', 'other_contract', 'other_event']);
      expect(s.stats().foreignRowsSent).toEqual(kinds);
    });
  });

  it('under a small limit the foreign rows take the place of the chain’s last rows; the same seed sends the same rows; rate 0 none', async () => {
    const limit = 30;
    const draw = (foreignRows: number) =>
      withSandbox({ foreignRows }, async (s) => {
        const alice = s.data.wallets[0]!.address;
        const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
        const pages: any[][] = [];
        for (let k = 0; k < 10; k++) {
          const from = truth[k * 20]!.block_number;
          pages.push(await walletPage(s, alice, `chain_id=1&limit=${limit}&filter_block_number_gte=${from}`));
        }
        return { pages, truth, sent: s.stats().foreignRowsSent };
      });
    const a = await draw(0.2);
    for (const page of a.pages) {
      expect(page).toHaveLength(limit);
      const { own } = split(page, new Set(ids(a.truth)));
      const from = a.truth.findIndex((t) => t.block_number >= page[0].block_number);
      expect(ids(own)).toEqual(ids(a.truth.slice(from, from + own.length)));
    }
    const foreign = a.pages.reduce((n, p) => n + split(p, new Set(ids(a.truth))).foreign.length, 0);
    expect(foreign).toBeGreaterThan(0);
    expect(Object.values(a.sent).reduce((n, x) => n + x!, 0)).toBe(foreign);
    expect((await draw(0.2)).pages).toEqual(a.pages);
    const none = await draw(0);
    expect(none.sent).toEqual({});
    for (const page of none.pages) expect(split(page, new Set(ids(none.truth))).foreign).toEqual([]);
  });
});
