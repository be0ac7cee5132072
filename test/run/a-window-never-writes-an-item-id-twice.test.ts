/**
 * Whatever a dataset's source streams (a collection repeated on a later explorer page, a row sent
 * again by a later request), a window writes each item_id once: de-duplication over the whole
 * window, not only at a cursor; by item_id, or by the key a dataset declares for a row within its
 * chain and target.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { column } from '../../src/columns/columns.js';
import type { ListDataset } from '../../src/datasets/dataset.js';
import { nftHoldingsDataset } from '../../src/datasets/nft-holdings.js';
import type { ExportWindow } from '../../src/run/export-windows.js';
import { LocalStore } from '../../src/store/local.js';
import { exportUnitsLocally } from '../helpers/local-export-windows.js';
import { useTempDir } from '../helpers/temp-dir.js';

interface Rec {
  chain_id: number;
  id: string;
  n: number;
}

const tmp = useTempDir('window-dedupe-');

/** A dataset streaming ids 0..29 in pages of 10, each page also repeating rows of earlier pages. */
const repeating: ListDataset<null, Rec> = {
  name: 'nft_holdings',
  tableName: () => 'repeats',
  columns: () => [column('item_id', 'string', 'id', false), column('chain_id', 'int64', 'chain', false), column('n', 'int64', 'n', false)],
  sortKey: ['chain_id', 'n'],
  targetKey: () => 'repeats',
  capabilities: nftHoldingsDataset.capabilities,
  collection: {
    kind: 'streamed',
    async *streamWindow(_client, _target, req) {
      for (const chainId of req.chainIds) {
        for (let page = 0; page < 3; page++) {
          const own = Array.from({ length: 10 }, (_, i) => page * 10 + i);
          const again = page === 0 ? [3] : [0, page * 10 - 1, 5];
          yield { chainId, records: [...own, ...again].map((n) => ({ chain_id: chainId, id: `${chainId}:${n}`, n })) };
        }
        yield { chainId, done: true };
      }
    },
  },
  position: () => ({ block_number: 0, block_timestamp: 1_706_745_600 }),
  chainId: (r) => r.chain_id,
  itemId: (r) => r.id,
  toRow: (r) => ({ item_id: r.id, chain_id: r.chain_id, n: r.n }),
  partitionDate: () => '2024-02-01',
};

/** The same, telling rows apart by a key of their own within a chain (as transactions and events do). */
const keyed: ListDataset<null, Rec> = { ...repeating, rowKey: (r) => String(r.n) };

describe('a window', () => {
  it.each([
    ['item_id', repeating],
    ['row key', keyed],
  ])('writes every item_id once even when the source sends rows again on later pages (by %s)', async (_by, dataset) => {
    const out = join(tmp.dir, `out-${_by}`);
    const store = new LocalStore(out);
    const unit = (chainId: number): ExportWindow => ({
      dataset,
      target: null,
      chainId,
      axis: 'time',
      start: 1_706_745_600,
      end: 1_706_832_000,
      unitKey: `repeats/x/${chainId}/time`,
      filters: {},
    });
    const outcomes = await exportUnitsLocally([unit(1), unit(8453)], {
      store,
      jobName: 'dedupe',
      stagingDir: join(tmp.dir, `staging-${_by}`),
    });
    expect(outcomes.map((o) => [o.chainId, o.status, o.rows])).toEqual([
      [1, 'done', 30],
      [8453, 'done', 30],
    ]);
    for (const chain of [1, 8453]) {
      const dir = join(out, 'repeats', `chain_id=${chain}`);
      const ids = readdirSync(dir).flatMap((f) =>
        readFileSync(join(dir, f), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { item_id: string }).item_id),
      );
      expect(ids).toEqual(Array.from({ length: 30 }, (_, n) => `${chain}:${n}`));
    }
  });
});
