import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { WindowState, type StagedFile } from '../../src/state/window-state.js';
import { windowRecord } from '../helpers/completed-windows.js';

let dir: string;
let store: LocalStore;
let state: WindowState;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'state-test-'));
  store = new LocalStore(dir);
  state = new WindowState(store, 'job1');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const record = (unitKey: string, start: number, end: number, keys: string[]) =>
  windowRecord(unitKey, { start, end }, 'r', keys, { completedAt: 'now' });

describe('WindowState', () => {
  it('lists completed intervals per unit key from marker names alone', async () => {
    await state.writeCompleted(record('transactions/0xabc/1/block', 200, 300, []));
    await state.writeCompleted(record('transactions/0xabc/1/block', 100, 200, []));
    await state.writeCompleted(record('events/0xdef_0x12/8453/time', 86400, 172800, []));
    const intervals = await state.completedIntervals();
    expect(Object.fromEntries(intervals)).toEqual({
      'transactions/0xabc/1/block': [
        { start: 100, end: 200 },
        { start: 200, end: 300 },
      ],
      'events/0xdef_0x12/8453/time': [{ start: 86400, end: 172800 }],
    });
  });

  it('deletes files of windows a crashed run uploaded but never completed', async () => {
    await store.put('transactions/a.parquet', 'a');
    await store.put('transactions/b.parquet', 'b');
    await state.writePending('transactions/0xabc/1/block', 0, 100, ['transactions/a.parquet', 'transactions/b.parquet']);
    const deleted = await state.cleanPending();
    expect(deleted.sort()).toEqual(['transactions/a.parquet', 'transactions/b.parquet']);
    expect(await store.head('transactions/a.parquet')).toBeNull();
    expect(await store.head(state.pendingKey('transactions/0xabc/1/block', 0, 100))).toBeNull();
  });

  it('keeps files that a completed marker lists when the crash came after it was written', async () => {
    await store.put('transactions/a.parquet', 'a');
    await store.put('transactions/stale.parquet', 's');
    await state.writePending('u/1/block', 0, 100, ['transactions/a.parquet', 'transactions/stale.parquet']);
    // Completed marker written, pending marker not yet removed (the crash point).
    await store.put(state.completedKey('u/1/block', 0, 100), JSON.stringify(record('u/1/block', 0, 100, ['transactions/a.parquet'])));
    const deleted = await state.cleanPending();
    expect(deleted).toEqual(['transactions/stale.parquet']);
    expect(await store.head('transactions/a.parquet')).not.toBeNull();
    expect(await state.readCompleted('u/1/block', 0, 100)).not.toBeNull();
  });

  it('keeps the files of a window whose completed marker landed though its write failed (an S3 answer lost in an outage)', async () => {
    // The store writes the completed marker, then the write throws as S3 does when the gateway
    // went away before answering and every retry found it down: the run counts the window failed.
    const unit = 'u/1/block';
    const markerKey = state.completedKey(unit, 0, 100);
    let lost = 0;
    const flaky: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
      put: async (key: string, body: Buffer | string, opts?: Parameters<ObjectStore['put']>[2]) => {
        const out = await store.put(key, body, opts);
        if (key === markerKey && lost++ === 0) throw new StoreUnavailableError('S3 unavailable (answer lost)');
        return out;
      },
    });
    const run = new WindowState(flaky, 'job1', { runId: 'run1' });
    await run.completedIntervals(); // the run lists the state before it exports
    const staged = await stagedFile('transactions/a.ndjson', 'row\n');
    await expect(run.commit({ unit_key: unit, start: 0, end: 100, run_id: 'run1', files: [staged] })).rejects.toThrow(
      StoreUnavailableError,
    );
    // The end of the run (the gateway back): uploads of windows it did not complete are removed.
    await run.cleanPending();
    const rec = await state.readCompleted(unit, 0, 100);
    expect(rec?.files.map((f) => f.key)).toEqual(['transactions/a.ndjson']);
    expect(await store.head('transactions/a.ndjson'), 'a completed window names a file that is gone').not.toBeNull();
    expect(await store.head(state.pendingKey(unit, 0, 100))).toBeNull();
  });

  it('removes the pending marker once the window is completed', async () => {
    await state.writePending('u/1/block', 0, 100, ['x.parquet']);
    await state.writeCompleted(record('u/1/block', 0, 100, ['x.parquet']));
    expect(await store.head(state.pendingKey('u/1/block', 0, 100))).toBeNull();
  });
});

/** A local file staged for a commit, with the digests its upload carries. */
async function stagedFile(key: string, text: string): Promise<StagedFile> {
  const path = join(dir, `staged-${key.replace(/\//g, '_')}`);
  await writeFile(path, text);
  const digest = (alg: string) => createHash(alg).update(text).digest('hex');
  return {
    key,
    path,
    contentType: 'application/x-ndjson',
    rows: 1,
    bytes: Buffer.byteLength(text),
    sha256: digest('sha256'),
    md5: digest('md5'),
  };
}
