/**
 * Each behaviour of the real service is one sandbox option (and --profile indexer turns them all
 * on): Blockscout's NFT routes, the indexer's error bodies, panics, SQL errors, omitempty
 * envelopes, resolve inputs and ClickHouse records. Without the option the answer is the contract's.
 */
import { describe, expect, it } from 'vitest';
import { getAddress } from 'viem';
import { profileOptions, startSandbox, withProfile, type Sandbox, type SandboxOptions } from '@insight-export/sandbox';
import { sandboxOptionsFromArgs } from '@insight-export/sandbox';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const plain = useSandbox({ seed: 42, transactions: 20_000 });

async function withSandbox<T>(opts: SandboxOptions, fn: (s: Sandbox) => Promise<T>): Promise<T> {
  const s = await startSandbox({ seed: 42, transactions: 20_000, ...opts });
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** next_page_params sent back as query parameters. */
const queryOf = (p: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, String(v)])).toString();

const alice = () => plain.data.wallets[0]!.address;
const nftUrl = (s: Sandbox, q = 'chain_id=1') => `${s.explorerUrl}/addresses/${alice()}/nft/collections?${q}`;

describe('Blockscout NFT options', () => {
  it('nftInstanceLimit: at most that many instances per collection, highest id first', async () => {
    const full = (await getJson(nftUrl(plain))).body.items;
    const big = full.find((c: any) => c.token_instances.length > 3);
    expect(big).toBeDefined();
    await withSandbox({ nftInstanceLimit: 3 }, async (s) => {
      const item = (await getJson(nftUrl(s))).body.items.find((c: any) => c.token.address === big.token.address);
      const ids = big.token_instances
        .map((i: any) => BigInt(i.id))
        .sort((a: bigint, b: bigint) => (a > b ? -1 : 1))
        .slice(0, 3);
      expect(item.token_instances.map((i: any) => BigInt(i.id))).toEqual(ids);
      expect(item.amount).toBe(big.amount);
    });
  });

  it('nftDistinctAmount: an ERC-1155 amount counts its token ids, not their balance', async () => {
    const full = (await getJson(nftUrl(plain))).body.items;
    const multi = full.find((c: any) => c.token.type === 'ERC-1155' && c.token_instances.some((i: any) => i.value !== '1'));
    expect(multi.amount).not.toBe(String(multi.token_instances.length));
    await withSandbox({ nftDistinctAmount: true }, async (s) => {
      const item = (await getJson(nftUrl(s))).body.items.find((c: any) => c.token.address === multi.token.address);
      expect(item.amount).toBe(String(multi.token_instances.length));
    });
  });

  it('nftChecksummed and nftTokenKeys: checksum case, address_hash/holders_count (both: with the old keys too)', async () => {
    await withSandbox({ nftChecksummed: true, nftTokenKeys: 'new' }, async (s) => {
      const item = (await getJson(nftUrl(s))).body.items[0];
      expect(item.token.address).toBeUndefined();
      expect(item.token.address_hash).toBe(getAddress(item.token.address_hash));
      expect(item.token.address_hash).not.toBe(item.token.address_hash.toLowerCase());
      expect(item.token.holders_count).toMatch(/^\d+$/);
    });
    await withSandbox({ nftTokenKeys: 'both' }, async (s) => {
      const token = (await getJson(nftUrl(s))).body.items[0].token;
      expect([token.address, token.holders]).toEqual([token.address_hash, token.holders_count]);
    });
  });

  it('nftTypeOrder and nftEchoPageParams: ERC-721 then ERC-1155 by hash; next_page_params echoes the request plus items_count', async () => {
    await withSandbox({ nftTypeOrder: true, nftEchoPageParams: true, nftPageSize: 5 }, async (s) => {
      const items: any[] = [];
      let q = 'chain_id=1&foo=bar';
      for (let n = 0; n < 50; n++) {
        const page = (await getJson(nftUrl(s, q))).body;
        items.push(...page.items);
        if (page.next_page_params === null) break;
        expect(page.next_page_params).toMatchObject({ chain_id: '1', foo: 'bar', items_count: page.items.length });
        expect(page.next_page_params.type).toBeUndefined();
        q = queryOf(page.next_page_params);
      }
      const keys = items.map((c) => `${c.token.type === 'ERC-721' ? 0 : 1}:${c.token.address}`);
      expect(keys).toEqual([...keys].sort());
      expect(new Set(items.map((c) => c.token.type))).toEqual(new Set(['ERC-721', 'ERC-1155']));
      expect(items.length).toBe(plain.data.nftHoldings(alice(), 1).length);
    });
  });

  it('nftUngroupedRoute: addresses/<hash>/nft pages every instance (404 without the option)', async () => {
    expect((await getJson(`${plain.explorerUrl}/addresses/${alice()}/nft?chain_id=1`)).status).toBe(404);
    await withSandbox({ nftUngroupedRoute: true, nftPageSize: 7 }, async (s) => {
      const got: string[] = [];
      let q = 'chain_id=1';
      for (let n = 0; n < 200; n++) {
        const page = (await getJson(`${s.explorerUrl}/addresses/${alice()}/nft?${q}`)).body;
        got.push(...page.items.map((i: any) => `${i.token.address}:${i.id}`));
        if (page.next_page_params === null) break;
        q = queryOf(page.next_page_params);
      }
      const held = plain.data.nftHoldings(alice(), 1).flatMap((h) => h.tokens.map((t) => `${h.contract.address}:${t.id}`));
      expect(got.length).toBe(held.length);
      expect([...got].sort()).toEqual([...held].sort());
    });
  });
});

describe('indexer error, envelope, resolve and record options', () => {
  it('insightErrorBodies: {code, message, support_id} instead of {error}', async () => {
    const url = (s: Sandbox) => `${s.url}/wallets/${alice()}/transactions?limit=0`;
    expect((await getJson(url(plain))).body).toEqual({ error: expect.any(String) });
    await withSandbox({ insightErrorBodies: true }, async (s) => {
      const { status, body } = await getJson(url(s));
      expect(status).toBe(400);
      expect(body).toEqual({ code: 400, message: expect.any(String), support_id: expect.any(String) });
    });
  });

  it('panicsAs500: an unparsable signature or an unindexed block in resolve is a 500 with an empty body', async () => {
    const contract = plain.data.contracts[0]!.address;
    expect((await getJson(`${plain.url}/events/${contract}/Transfer(uint)x`)).status).toBe(400);
    await withSandbox({ panicsAs500: true }, async (s) => {
      for (const url of [`${s.url}/events/${contract}/Transfer(uint)x`, `${s.url}/resolve/999999999`]) {
        const res = await fetch(url);
        expect(res.status).toBe(500);
        expect(await res.text()).toBe('');
      }
      expect((await getJson(`${s.url}/resolve/${plain.data.chains[0]!.headBlock}?chain_id=${plain.data.chains[0]!.chainId}`)).status).toBe(
        200,
      );
    });
  });

  it('sqlErrorsAs500: an aggregate the database rejects is a 500 "An unexpected error occurred."', async () => {
    const url = (s: Sandbox) => `${s.url}/wallets/${alice()}/transactions?aggregate=nosuchfn(x)`;
    expect((await getJson(url(plain))).status).toBe(400);
    await withSandbox({ sqlErrorsAs500: true, insightErrorBodies: true }, async (s) => {
      expect(await getJson(url(s))).toMatchObject({ status: 500, body: { code: 500, message: 'An unexpected error occurred.' } });
    });
  });

  it('omitEmpty: zero meta fields and null data/aggregations are left out; resolve of nothing is data {}', async () => {
    const page = `/wallets/${alice()}/transactions?chain_id=1&filter_block_number_gt=999999999`;
    const unknown = `/resolve/0x${'ab'.repeat(32)}`;
    expect((await getJson(plain.url + page)).body).toMatchObject({
      meta: { total_items: 0, total_pages: 0 },
      data: [],
      aggregations: null,
    });
    await withSandbox({ omitEmpty: true, strictResolve: true }, async (s) => {
      const body = (await getJson(s.url + page)).body;
      expect(body).toEqual({ meta: { chain_ids: [1], page: 0, limit_per_chain: 20, address: alice() }, data: [] });
      expect((await getJson(s.url + unknown)).body.data).toEqual({});
    });
  });

  it('strictResolve: names and odd inputs are 400 invalid input; no type unknown and no data.address', async () => {
    expect((await getJson(`${plain.url}/resolve/alice.eth`)).body.data.address).toBe(alice());
    await withSandbox({ strictResolve: true }, async (s) => {
      expect(await getJson(`${s.url}/resolve/alice.eth`)).toMatchObject({ status: 400, body: { error: "invalid input 'alice.eth'" } });
      const addressAnswer = (await getJson(`${s.url}/resolve/${alice()}`)).body.data;
      expect(addressAnswer.type).toBe('address');
      expect('address' in addressAnswer).toBe(false);
      expect((await getJson(`${s.url}/resolve/0x${'ab'.repeat(32)}`)).body.data.type).toBeUndefined();
    });
  });

  it('indexerRecords: "" for creations and plain transfers, "0" legacy fees, blob fields', async () => {
    const q = `/wallets/${alice()}/transactions?chain_id=1&limit=1000`;
    const contractRows = (await getJson(plain.url + q)).body.data;
    await withSandbox({ indexerRecords: true }, async (s) => {
      const rows = (await getJson(s.url + q)).body.data;
      expect(rows.length).toBe(contractRows.length);
      rows.forEach((r: any, i: number) => {
        const c = contractRows[i];
        expect(r.to_address).toBe(c.to_address ?? '');
        expect(r.function_selector).toBe(c.function_selector ?? '');
        if (c.transaction_type < 2) expect([r.max_fee_per_gas, r.max_priority_fee_per_gas]).toEqual(['0', '0']);
        expect(r.max_fee_per_blob_gas).toMatch(/^\d+$/);
        expect(Array.isArray(r.blob_versioned_hashes)).toBe(c.transaction_type === 3);
      });
      expect(contractRows.some((c: any) => c.function_selector === null)).toBe(true);
      expect(contractRows.some((c: any) => c.transaction_type < 2)).toBe(true);
    });
  });
});

describe('--profile', () => {
  it('indexer turns every option on; a flag given overrides it; an unknown profile is a typed error', () => {
    const base = {
      port: 0,
      host: '127.0.0.1',
      transactions: 1000,
      seed: 1,
      'latency-ms': 0,
      'jitter-ms': 0,
      'fault-500': 0,
      'fault-502': 0,
      'fault-503': 0,
      'fault-429': 0,
      'fault-reset': 0,
      'fault-truncate': 0,
      'fault-stall': 0,
      'stall-ms': 1,
      'fault-seed': 1,
      'path-prefix': '/v1',
      'explorer-prefix': '/api/v2',
      'nft-page-size': 50,
      'duplicate-self-transfers': false,
      'legacy-types': false,
      'decoded-variants': false,
    };
    const opts = withProfile(sandboxOptionsFromArgs({ ...base, profile: 'indexer', 'nft-ungrouped-route': false }, {}));
    expect(opts).toMatchObject({ ...profileOptions('indexer'), nftUngroupedRoute: false });
    expect(opts.nftInstanceLimit).toBe(9);
    expect(withProfile(sandboxOptionsFromArgs({ ...base }, {})).nftInstanceLimit).toBeUndefined();
    expect(() => profileOptions('nope')).toThrowError(/unknown sandbox profile/);
  });
});
