/**
 * A window holds one of the run's `units_in_flight` slots while it pages, not while its files are
 * finished and uploaded: a conversion or an upload that takes a while (a DuckDB conversion queued
 * behind others, a slow store) does not hold back the next window's requests.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { column } from '../../src/columns/columns.js';
import type { ListDataset } from '../../src/datasets/dataset.js';
import { nftHoldingsDataset } from '../../src/datasets/nft-holdings.js';
import type { ExportWindow } from '../../src/run/export-windows.js';
import { LocalStore } from '../../src/store/local.js';
import type { PutOptions } from '../../src/store/store.js';
import { exportUnitsLocally } from '../helpers/local-export-windows.js';
import { useTempDir } from '../helpers/temp-dir.js';

interface Rec {
  chain_id: number;
  n: number;
}

const tmp = useTempDir('window-finishing-');
const DAY = 86_400;
const START = 1_706_745_600;
const events: string[] = [];
let secondWindowPaging: () => void = () => undefined;
const secondWindowStarted = new Promise<void>((resolve) => (secondWindowPaging = resolve));

const dataset: ListDataset<null, Rec> = {
  name: 'nft_holdings',
  tableName: () => 'days',
  columns: () => [column('item_id', 'string', 'id', false), column('chain_id', 'int64', 'chain', false), column('n', 'int64', 'n', false)],
  sortKey: ['chain_id', 'n'],
  targetKey: () => 'days',
  capabilities: nftHoldingsDataset.capabilities,
  collection: {
    kind: 'streamed',
    async *streamWindow(_client, _target, req) {
      const day = (req.start - START) / DAY;
      events.push(`window ${day} pages`);
      if (day === 1) secondWindowPaging();
      for (const chainId of req.chainIds) {
        yield { chainId, records: [0, 1, 2].map((i) => ({ chain_id: chainId, n: day * 10 + i })) };
        yield { chainId, done: true };
      }
    },
  },
  position: () => ({ block_number: 0, block_timestamp: START }),
  chainId: (r) => r.chain_id,
  itemId: (r) => `${r.chain_id}:${r.n}`,
  toRow: (r) => ({ item_id: `${r.chain_id}:${r.n}`, chain_id: r.chain_id, n: r.n }),
  partitionDate: () => '2024-02-01',
};

/** A store whose first upload is slow: it waits for the second window to page (at most 5 s). */
class SlowFirstUpload extends LocalStore {
  private uploads = 0;
  override async putFile(key: string, path: string, opts?: PutOptions): Promise<{ etag: string }> {
    if (this.uploads++ === 0) {
      events.push('window 0 uploading');
      await Promise.race([secondWindowStarted, new Promise((r) => setTimeout(r, 5_000))]);
      events.push('window 0 uploaded');
    }
    return super.putFile(key, path, opts);
  }
}

it('starts the next window while the one before it is still uploading its files', { timeout: 30_000 }, async () => {
  const store = new SlowFirstUpload(join(tmp.dir, 'out'));
  const unit = (day: number): ExportWindow => ({
    dataset,
    target: null,
    chainId: 1,
    axis: 'time',
    start: START + day * DAY,
    end: START + (day + 1) * DAY,
    unitKey: 'days/x/1/time',
    filters: {},
  });
  const outcomes = await exportUnitsLocally([unit(0), unit(1)], { store, jobName: 'finishing', stagingDir: join(tmp.dir, 'staging') });
  expect(outcomes.map((o) => [o.start, o.status, o.rows]).sort()).toEqual([
    [START, 'done', 3],
    [START + DAY, 'done', 3],
  ]);
  // The second window paged before the first one's upload ended (not after it, 5 s later).
  expect(events.indexOf('window 1 pages')).toBeGreaterThan(events.indexOf('window 0 pages'));
  expect(events.indexOf('window 1 pages')).toBeLessThan(events.indexOf('window 0 uploaded'));
});
