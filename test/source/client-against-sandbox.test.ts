/**
 * Every operation of the client against the project's sandbox server, checked against the
 * sandbox's ground truth (its data set, queried without HTTP) and against the contract's
 * field tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@insight-export/sandbox';
import { InsightClient } from '../../src/source/client.js';
import { RequestValidationError } from '../../src/source/errors.js';
import type { ListQuery } from '../../src/source/query.js';
import type { TransactionRecord } from '../../src/source/records.js';
import {
  BLOCK_FIELDS,
  DECODED_EVENT_FIELDS,
  DECODED_TRANSACTION_FIELDS,
  DECODE_LOG_RESULT_FIELDS,
  DECODE_TRANSACTION_RESULT_FIELDS,
  EVENT_FIELDS,
  LIST_EVENT_FIELDS,
  LIST_TRANSACTION_FIELDS,
  META_FIELDS,
  META_OPTIONAL_FIELDS,
  NFT_COLLECTION_FIELDS,
  NFT_INSTANCE_FIELDS,
  NFT_OWNER_FIELDS,
  NFT_TOKEN_FIELDS,
  RESOLVE_DATA_FIELDS,
  TRANSACTION_FIELDS,
  sorted,
  sortedKeys,
} from './contract-fields.js';

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

let sandbox: Sandbox;
let client: InsightClient;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 7, transactions: 5000, nftPageSize: 3 });
  client = new InsightClient({ baseUrl: sandbox.url, explorerBaseUrl: sandbox.explorerUrl, maxAttempts: 1 });
});
afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

const hot = () => sandbox.data.wallets[0]!;
const chainOf = (i: number) => sandbox.data.chains[i]!.chainId;
const withoutDecoded = <T extends { decoded?: unknown }>(r: T): Omit<T, 'decoded'> => {
  const { decoded: _d, ...rest } = r;
  return rest;
};

/** Pages a list operation with sort_by=block_number until a short page. */
async function pageAll<T>(fetch: (page: number) => Promise<{ data: T[] }>, limit: number): Promise<{ rows: T[]; pages: number }> {
  const rows: T[] = [];
  for (let page = 0; ; page++) {
    const res = await fetch(page);
    rows.push(...res.data);
    if (res.data.length < limit) return { rows, pages: page + 1 };
  }
}

describe('wallet transactions (operation 1)', () => {
  it('pages a wallet on one chain and returns exactly the ground-truth rows, in order', async () => {
    const wallet = sandbox.data.wallets[1]!;
    const chainId = chainOf(0);
    const q: ListQuery = { chainIds: [chainId], sortBy: 'block_number', sortOrder: 'asc', limit: 50 };
    const { rows, pages } = await pageAll((page) => client.walletTransactions(wallet.address, { ...q, page }), 50);
    expect(rows).toHaveLength(wallet.transactionsByChain[chainId]!);
    expect(pages).toBe(Math.floor(rows.length / 50) + 1);
    const truth = sandbox.data.allWalletTransactions(
      wallet.address,
      sandbox.data.parseTransactionsQuery(`chain_id=${chainId}&sort_by=block_number&sort_order=asc`),
    );
    expect(rows.map(withoutDecoded)).toEqual(truth.map(withoutDecoded));
    for (const r of rows) {
      expect(r.from_address === wallet.address || r.to_address === wallet.address).toBe(true);
      expect(r.decoded).toBeNull();
    }
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.block_number).toBeGreaterThanOrEqual(rows[i - 1]!.block_number);
  });

  it('accepts a wallet name and several chains (limit per chain)', async () => {
    const wallet = sandbox.data.wallets[2]!;
    expect(wallet.name).not.toBeNull();
    const ids = [chainOf(0), chainOf(1)];
    const res = await client.walletTransactions(wallet.name!, { chainIds: ids, limit: 5, sortBy: 'block_number', sortOrder: 'desc' });
    expect(res.meta.chain_ids).toEqual(ids);
    expect(res.meta.limit_per_chain).toBe(5);
    for (const id of ids) expect(res.data.filter((r) => r.chain_id === id)).toHaveLength(5);
  });

  it('applies range and equality filters the same way the ground truth does', async () => {
    const wallet = hot();
    const chainId = chainOf(0);
    const all = sandbox.data.allWalletTransactions(
      wallet.address,
      sandbox.data.parseTransactionsQuery(`chain_id=${chainId}&sort_by=block_number`),
    );
    const lo = all[Math.floor(all.length / 4)]!.block_number;
    const hi = all[Math.floor((3 * all.length) / 4)]!.block_number;
    const res = await client.walletTransactions(wallet.address, {
      chainIds: [chainId],
      filters: { filter_block_number_gte: lo, filter_block_number_lt: BigInt(hi), filter_value_gt: '0' },
      sortBy: 'block_number',
      limit: 1000,
    });
    const expected = all.filter((r) => r.block_number >= lo && r.block_number < hi && BigInt(r.value) > 0n);
    expect(expected.length).toBeGreaterThan(0);
    expect(res.data.map((r) => r.hash)).toEqual(expected.map((r) => r.hash));

    const one = all[10]!;
    const byHash = await client.walletTransactions(wallet.address, { chainIds: [chainId], filters: { filter_hash: one.hash } });
    expect(byHash.data.map((r) => r.hash)).toEqual([one.hash]);
    const bySelector = await client.walletTransactions(wallet.address, {
      chainIds: [chainId],
      filters: { filter_function_selector: one.function_selector!, filter_block_timestamp_lte: one.block_timestamp },
      limit: 1000,
    });
    expect(bySelector.data.length).toBeGreaterThan(0);
    for (const r of bySelector.data) {
      expect(r.function_selector).toBe(one.function_selector);
      expect(r.block_timestamp).toBeLessThanOrEqual(one.block_timestamp);
    }
  });

  it('pages to the cap (page 20) and refuses page 21 without sending it', async () => {
    const wallet = hot();
    const chainId = chainOf(0);
    const truth = sandbox.data.allWalletTransactions(
      wallet.address,
      sandbox.data.parseTransactionsQuery(`chain_id=${chainId}&sort_by=block_number`),
    );
    expect(truth.length).toBeGreaterThan(21 * 10);
    const seen: string[] = [];
    for (let page = 0; page <= 20; page++) {
      const res = await client.walletTransactions(wallet.address, { chainIds: [chainId], sortBy: 'block_number', limit: 10, page });
      expect(res.data).toHaveLength(10);
      expect(res.meta.page).toBe(page);
      seen.push(...res.data.map((r) => r.hash));
    }
    expect(seen).toEqual(truth.slice(0, 210).map((r) => r.hash));
    const before = sandbox.stats().requests;
    await expect(
      client.walletTransactions(wallet.address, { chainIds: [chainId], sortBy: 'block_number', limit: 10, page: 21 }),
    ).rejects.toBeInstanceOf(RequestValidationError);
    expect(sandbox.stats().requests).toBe(before);
  });

  it('decode=true fills decoded on wallet transactions', async () => {
    const res = await client.walletTransactions(hot().address, {
      chainIds: [chainOf(0)],
      decode: true,
      limit: 200,
      sortBy: 'block_number',
    });
    const decoded = res.data.filter((r) => r.decoded !== null);
    expect(decoded.length).toBeGreaterThan(0);
    for (const r of decoded) {
      expect(sortedKeys(r.decoded!)).toEqual(sorted(DECODED_TRANSACTION_FIELDS));
      expect(r.function_selector).not.toBeNull();
      const args = sandbox.data.transactionArgs(r.chain_id, r.hash);
      if (args) expect(r.decoded!.name).toBe(args.name);
    }
  });

  it('group_by + aggregate rows agree with counting the ground truth, and page past 20', async () => {
    const wallet = hot();
    const ids = sandbox.data.chains.map((c) => c.chainId);
    const byChain = await client.walletTransactions(wallet.address, {
      chainIds: ids,
      groupBy: ['chain_id'],
      aggregate: ['count() as count'],
    });
    const counts = Object.fromEntries(byChain.aggregations!.map((row) => [String(row.chain_id), Number(row.count)]));
    expect(counts).toEqual(Object.fromEntries(Object.entries(wallet.transactionsByChain).map(([k, v]) => [k, v])));
    expect(byChain.data).toEqual([]);

    // One row per block, 5 rows a page: more than 21 pages, allowed because the query aggregates.
    const chainId = chainOf(0);
    const truth = sandbox.data.allWalletTransactions(
      wallet.address,
      sandbox.data.parseTransactionsQuery(`chain_id=${chainId}&sort_by=block_number`),
    );
    const gasByBlock = new Map<number, bigint>();
    for (const r of truth) gasByBlock.set(r.block_number, (gasByBlock.get(r.block_number) ?? 0n) + BigInt(r.gas_used ?? 0));
    expect(gasByBlock.size).toBeGreaterThan(22 * 5);
    const rows: Record<string, unknown>[] = [];
    for (let page = 0; ; page++) {
      const res = await client.walletTransactions(wallet.address, {
        chainIds: [chainId],
        groupBy: ['block_number'],
        aggregate: ['sum(gas_used) as gas', 'count()'],
        sortBy: 'block_number',
        limit: 5,
        page,
      });
      rows.push(...res.aggregations!);
      if (res.aggregations!.length < 5) break;
    }
    expect(rows).toHaveLength(gasByBlock.size);
    for (const row of rows) {
      expect(String(row.gas)).toBe(String(gasByBlock.get(Number(row.block_number))));
      expect(row).toHaveProperty(['count()']);
    }
  });
});

describe('contract events (operation 2)', () => {
  it('pages a token contract Transfer events with decode and matches the ground truth', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20')!;
    const q: ListQuery = { chainIds: [token.chainId], sortBy: 'block_number', sortOrder: 'asc', decode: true, limit: 100 };
    const { rows } = await pageAll((page) => client.contractEvents(token.address, TRANSFER, { ...q, page }), 100);
    const truth = sandbox.data.allContractEvents(
      token.address,
      TRANSFER,
      sandbox.data.parseEventsQuery(`chain_id=${token.chainId}&sort_by=block_number&sort_order=asc`),
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map(withoutDecoded)).toEqual(truth.map(withoutDecoded));
    for (const ev of rows) {
      expect(ev.decoded?.name).toBe('Transfer');
      expect(sortedKeys(ev.decoded!)).toEqual(sorted(DECODED_EVENT_FIELDS));
      const args = sandbox.data.logArgs(ev.chain_id, ev.transaction_hash);
      expect(ev.decoded!.indexed_params.from).toBe(args!.args.from);
      expect(ev.decoded!.indexed_params.to).toBe(args!.args.to);
      expect(String(ev.decoded!.non_indexed_params.value)).toBe(args!.args.value);
    }
  });

  it('filters on topics and log index', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20')!;
    const all = sandbox.data.allContractEvents(
      token.address,
      TRANSFER,
      sandbox.data.parseEventsQuery(`chain_id=${token.chainId}&sort_by=block_number`),
    );
    const sample = all[0]!;
    const res = await client.contractEvents(token.address, TRANSFER, {
      chainIds: [token.chainId],
      filters: { filter_topic_1: sample.topics[1]!, filter_log_index_gte: 0 },
      sortBy: 'block_number',
      limit: 1000,
    });
    const expected = all.filter((e) => e.topics[1] === sample.topics[1]);
    expect(res.data.map((e) => `${e.transaction_hash}:${e.log_index}`)).toEqual(
      expected.map((e) => `${e.transaction_hash}:${e.log_index}`),
    );
  });

  it('group_by + aggregate on events', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20')!;
    const res = await client.contractEvents(token.address, TRANSFER, {
      chainIds: [token.chainId],
      groupBy: ['chain_id'],
      aggregate: ['count() as n'],
    });
    const truth = sandbox.data.allContractEvents(token.address, TRANSFER, sandbox.data.parseEventsQuery(`chain_id=${token.chainId}`));
    expect(res.aggregations).toHaveLength(1);
    expect(Number(res.aggregations![0]!.n)).toBe(truth.length);
  });
});

describe('resolve (operation 3)', () => {
  it('resolves a block number, a transaction hash, an address and a name', async () => {
    const chain = sandbox.data.chains[0]!;
    const n = chain.firstBlock + 5;
    const block = await client.resolve(String(n), { chainIds: [chain.chainId] });
    expect(block.data.type).toBe('block');
    expect(block.data.blocks).toEqual([sandbox.data.block(chain.chainId, n)]);

    const tx = sandbox.data.transactions(chain.chainId).next().value as TransactionRecord;
    const byHash = await client.resolve(tx.hash);
    expect(byHash.data.type).toBe('transaction');
    expect(byHash.data.transactions.map((t) => t.hash)).toContain(tx.hash);
    expect(byHash.data.transactions.find((t) => t.hash === tx.hash)).toEqual(withoutDecoded(tx));

    const named = sandbox.data.wallets.find((w) => w.name)!;
    const byName = await client.resolve(named.name!);
    expect(byName.data.address).toBe(named.address);
  });
});

describe('decode (operation 4)', () => {
  it('decodes raw calls and logs of a token contract to the names they were encoded from', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20')!;
    const txs = [...sandbox.data.transactions(token.chainId)].filter((t) => t.to_address === token.address && t.data !== '0x').slice(0, 5);
    const logs = [...sandbox.data.logs(token.chainId)].filter((l) => l.address === token.address).slice(0, 5);
    expect(txs.length).toBeGreaterThan(0);
    expect(logs.length).toBeGreaterThan(0);
    const res = await client.decode(
      token.address,
      { transactions: txs.map((t) => ({ data: t.data })), logs: logs.map((l) => ({ topics: l.topics, data: l.data })) },
      { chainIds: [token.chainId] },
    );
    expect(res.data.transactions).toHaveLength(txs.length);
    expect(res.data.logs).toHaveLength(logs.length);
    res.data.transactions.forEach((d, i) => {
      expect(sortedKeys(d)).toEqual(sorted(DECODE_TRANSACTION_RESULT_FIELDS));
      expect(d.function_name).toBe(sandbox.data.transactionArgs(token.chainId, txs[i]!.hash)!.name);
    });
    res.data.logs.forEach((d, i) => {
      expect(sortedKeys(d)).toEqual(sorted(DECODE_LOG_RESULT_FIELDS));
      expect(d.event_name).toBe(sandbox.data.logArgs(token.chainId, logs[i]!.transaction_hash)!.name);
    });
  });
});

describe('NFT collections (operation 5)', () => {
  it('follows next_page_params through every page and returns exactly the holdings', async () => {
    const chainId = chainOf(0);
    const holder = sandbox.data.wallets.find((w) => sandbox.data.nftHoldings(w.address, chainId).length > 3);
    expect(holder, 'a wallet with more than one page of collections').toBeDefined();
    const before = sandbox.stats().byRoute.nft ?? 0;
    const got: string[] = [];
    for await (const c of client.nftCollections(holder!.address)) got.push(c.token.address);
    const expected = sandbox.data.nftHoldings(holder!.address, chainId).map((h) => h.contract.address);
    expect(got).toEqual(expected);
    // Three collections a page; a last full page may or may not be followed by an empty one.
    const requests = (sandbox.stats().byRoute.nft ?? 0) - before;
    expect(requests).toBeGreaterThanOrEqual(Math.ceil(expected.length / 3));
    expect(requests).toBeLessThanOrEqual(Math.ceil(expected.length / 3) + 1);

    const only721: string[] = [];
    for await (const c of client.nftCollections(holder!.address, { types: ['ERC-721'] })) only721.push(c.token.type);
    expect(only721.every((t) => t === 'ERC-721')).toBe(true);
    expect(only721).toHaveLength(sandbox.data.nftHoldings(holder!.address, chainId).filter((h) => h.contract.kind === 'erc721').length);
  });
});

describe('normalised records carry exactly the fields of the contract tables', () => {
  it('transactions, events, blocks, meta, resolve data, NFT items', async () => {
    const wallet = hot();
    const txs = await client.walletTransactions(wallet.address, { chainIds: [chainOf(0)], limit: 50, decode: true });
    expect(txs.data.length).toBeGreaterThan(0);
    for (const r of txs.data) expect(sortedKeys(r)).toEqual(sorted(LIST_TRANSACTION_FIELDS));
    const metaKeys = sortedKeys(txs.meta);
    for (const k of META_FIELDS) expect(metaKeys).toContain(k);
    for (const k of metaKeys) expect([...META_FIELDS, ...META_OPTIONAL_FIELDS]).toContain(k);

    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20')!;
    const evs = await client.contractEvents(token.address, TRANSFER, { chainIds: [token.chainId], limit: 50 });
    expect(evs.data.length).toBeGreaterThan(0);
    for (const r of evs.data) expect(sortedKeys(r)).toEqual(sorted(LIST_EVENT_FIELDS));

    const chain = sandbox.data.chains[0]!;
    const block = await client.resolve(String(chain.firstBlock + 1));
    expect(sortedKeys(block.data)).toEqual(sorted(RESOLVE_DATA_FIELDS));
    for (const b of block.data.blocks) expect(sortedKeys(b)).toEqual(sorted(BLOCK_FIELDS));
    const byAddress = await client.resolve(token.address);
    expect(byAddress.data.type).toBe('contract');
    expect(byAddress.data.transactions.length).toBeGreaterThan(0);
    for (const t of byAddress.data.transactions) expect(sortedKeys(t)).toEqual(sorted(TRANSACTION_FIELDS));
    const tx = [...sandbox.data.transactions(chain.chainId)].find((t) => sandbox.data.logArgs(chain.chainId, t.hash))!;
    const withEvents = await client.resolve(tx.hash, { chainIds: [chain.chainId] });
    expect(withEvents.data.events.length + withEvents.data.transactions.length).toBeGreaterThan(0);
    for (const e of withEvents.data.events) expect(sortedKeys(e)).toEqual(sorted(EVENT_FIELDS));

    const holder = sandbox.data.wallets.find((w) => sandbox.data.nftHoldings(w.address, chain.chainId).length > 0)!;
    const page = await client.nftCollectionsPage(holder.address);
    expect(page.items.length).toBeGreaterThan(0);
    for (const item of page.items) {
      expect(sortedKeys(item)).toEqual(sorted(NFT_COLLECTION_FIELDS));
      expect(sortedKeys(item.token)).toEqual(sorted(NFT_TOKEN_FIELDS));
      for (const inst of item.token_instances) {
        expect(sortedKeys(inst)).toEqual(sorted(NFT_INSTANCE_FIELDS));
        if (inst.owner) expect(sortedKeys(inst.owner)).toEqual(sorted(NFT_OWNER_FIELDS));
      }
    }
  });
});
