import { describe, expect, it } from 'vitest';
import { streamedWindow } from '../helpers/streamed-window.js';
import { NftValueError, nftHoldingsDataset, type NftHoldingRecord, type NftHoldingsTarget } from '../../src/datasets/nft-holdings.js';
import type { InsightClient } from '../../src/source/client.js';
import type { NftCollection } from '../../src/source/records.js';

const WALLET = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const target: NftHoldingsTarget = { kind: 'nft_holdings', address: WALLET, types: ['ERC-721', 'ERC-1155'] };

function collection(address: string, type: string, ids: string[]): NftCollection {
  return {
    token: {
      circulating_market_cap: null,
      icon_url: null,
      name: `C ${address.slice(-4)}`,
      decimals: null,
      symbol: 'C',
      address,
      type,
      holders: '0012',
      exchange_rate: '1.25',
      total_supply: null,
    },
    amount: String(ids.length),
    token_instances: ids.map((id) => ({
      is_unique: type === 'ERC-721',
      id,
      owner: null,
      token_type: type,
      value: '1',
      holder_address_hash: WALLET.toUpperCase().replace('0X', '0x'),
      image_url: null,
      animation_url: null,
      external_app_url: null,
      metadata: { name: `#${id}`, attributes: [{ trait_type: 'Level', value: 3 }] },
      token: null,
    })),
  };
}

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

/** A client whose explorer route returns fixed collections per chain (what the paging client yields). */
function fakeClient(byChain: Record<number, NftCollection[]>, asked: unknown[]): InsightClient {
  return {
    async *nftCollections(address: string, opts: { types?: string[]; chainIds?: number[] }) {
      asked.push({ address, ...opts });
      for (const c of byChain[opts.chainIds![0]!] ?? []) yield c;
    },
  } as unknown as InsightClient;
}

describe('nft_holdings rows', () => {
  it('one row per instance of the asked standards, once, per chain; each chain ends with done', async () => {
    const asked: unknown[] = [];
    const client = fakeClient(
      {
        1: [collection(addr(1), 'ERC-721', ['1', '2']), collection(addr(2), 'ERC-20', ['0']), collection(addr(1), 'ERC-721', ['2', '3'])],
        8453: [collection(addr(3), 'ERC-1155', ['7'])],
      },
      asked,
    );
    const out: { chainId: number; records?: NftHoldingRecord[]; done?: true }[] = [];
    const start = Date.UTC(2024, 1, 5) / 1000;
    for await (const b of streamedWindow(nftHoldingsDataset, client, target, {
      chainIds: [1, 8453],
      axis: 'time',
      start,
      end: start + 86_400,
      filters: {},
      limit: 1000,
    })) {
      out.push(b as never);
    }
    expect(asked).toEqual([
      { address: WALLET, types: ['ERC-721', 'ERC-1155'], chainIds: [1] },
      { address: WALLET, types: ['ERC-721', 'ERC-1155'], chainIds: [8453] },
    ]);
    const ids = out.flatMap((b) => (b.records ?? []).map((r) => nftHoldingsDataset.itemId(r, target)));
    expect(ids).toEqual([
      `1:${WALLET}:${addr(1)}:1:2024-02-05`,
      `1:${WALLET}:${addr(1)}:2:2024-02-05`,
      `1:${WALLET}:${addr(1)}:3:2024-02-05`,
      `8453:${WALLET}:${addr(3)}:7:2024-02-05`,
    ]);
    expect(out.filter((b) => b.done).map((b) => b.chainId)).toEqual([1, 8453]);
  });

  it('map collection and instance fields to typed columns (exact integers, lowercase hex, metadata as JSON text)', () => {
    const c = collection(addr(9), 'ERC-721', ['0042']);
    const row = nftHoldingsDataset.toRow(
      {
        chain_id: 1,
        snapshot_date: '2024-02-05',
        collection: c,
        instance: c.token_instances[0]!,
        completeness: { returned: 1, held: 1, complete: true },
      },
      target,
    );
    expect(row).toMatchObject({
      item_id: `1:${WALLET}:${addr(9)}:42:2024-02-05`,
      token_id: '42',
      token_holders: '12',
      token_total_supply: null,
      token_exchange_rate: '1.25',
      holder_address: WALLET,
      owner_address: null,
      is_unique: true,
      snapshot_date: '2024-02-05',
    });
    expect(JSON.parse(row.metadata as string)).toEqual({ name: '#0042', attributes: [{ trait_type: 'Level', value: 3 }] });
    expect(nftHoldingsDataset.partitionDate!(row)).toBe('2024-02-05');
  });

  it('a token id that is not an integer is a typed error, not a silently wrong row', () => {
    const c = collection(addr(9), 'ERC-721', ['abc']);
    expect(() =>
      nftHoldingsDataset.toRow(
        {
          chain_id: 1,
          snapshot_date: '2024-02-05',
          collection: c,
          instance: c.token_instances[0]!,
          completeness: { returned: 1, held: 1, complete: true },
        },
        target,
      ),
    ).toThrowError(NftValueError);
  });
});
