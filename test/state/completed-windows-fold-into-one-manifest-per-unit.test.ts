/**
 * Completed windows are folded out of their per-window markers into one manifest per unit
 * (src/state/stream-manifests.ts): a re-run reads one object per unit whatever the number of
 * windows, several writers of one unit never lose each other's windows, a window exported again
 * replaces the folded windows it overlaps, and many folds keep few segments and every record.
 */
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { WindowState, type WindowRecord } from '../../src/state/window-state.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { windowRecord } from '../helpers/completed-windows.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('manifests-');
let n = 0;
const fresh = () => new LocalStore(join(tmp.dir, `d${n++}`));

const record = (unitKey: string, start: number, end: number, runId: string, keys: string[] = []) =>
  windowRecord(unitKey, { start, end }, runId, keys);

/** Commits windows as a run does (after listing what is completed). */
async function commitWindows(state: WindowState, unitKey: string, from: number, count: number, runId: string): Promise<void> {
  await state.completedIntervals();
  for (let i = 0; i < count; i++) await state.writeCompleted(record(unitKey, from + i * 10, from + (i + 1) * 10, runId));
}

const markersOf = (store: LocalStore, job: string) => {
  const dir = join(store.location, '_state', job, 'completed');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.json')) : [];
};

it('a re-run reads one manifest per unit, not one object per window', async () => {
  const store = fresh();
  const writer = new WindowState(store, 'job', { runId: 'r1' });
  // 10 windows a unit: one read per unit proves it as well as 50 did (each window is a durable write).
  for (let u = 0; u < 5; u++) await commitWindows(writer, `transactions/0x${u}/1/time`, 0, 10, 'r1');
  await writer.foldCommitted();
  expect(markersOf(store, 'job')).toEqual([]);

  let gets = 0;
  const get = store.get.bind(store);
  store.get = (key) => {
    gets++;
    return get(key);
  };
  const completed = await new WindowState(store, 'job').completedIntervals();
  expect([...completed.values()].map((l) => l.length)).toEqual([10, 10, 10, 10, 10]);
  expect(completed.get('transactions/0x3/1/time')![9]).toEqual({ start: 90, end: 100 });
  expect(gets).toBe(5);
});

it('several writers folding one unit at once keep every window', async () => {
  const store = fresh();
  const unit = 'events/0xabc_0xddf2/1/block';
  const writers = [0, 1, 2, 3].map((i) => new WindowState(store, 'job', { runId: `shard-${i}` }));
  await Promise.all(writers.map((w, i) => commitWindows(w, unit, i * 1000, 15, `shard-${i}`)));
  await Promise.all(writers.map((w) => w.foldCommitted()));
  const reader = new WindowState(store, 'job');
  expect((await reader.completedIntervals()).get(unit)).toHaveLength(60);
  const runs = new Map<string, number>();
  for await (const r of reader.completedRecords()) runs.set(r.run_id, (runs.get(r.run_id) ?? 0) + 1);
  expect(Object.fromEntries(runs)).toEqual({ 'shard-0': 15, 'shard-1': 15, 'shard-2': 15, 'shard-3': 15 });
  expect(markersOf(store, 'job')).toEqual([]);
});

it('a window exported again replaces the folded windows it overlaps, before and after its own fold', async () => {
  const store = fresh();
  const unit = 'transactions/0xabc/1/block';
  const first = new WindowState(store, 'job', { runId: 'r1' });
  for (const [s, e] of [
    [0, 10],
    [10, 20],
    [20, 30],
  ] as const) {
    await store.put(`t/${s}.ndjson`, 'old');
    await first.writeCompleted(record(unit, s, e, 'r1', [`t/${s}.ndjson`]));
  }
  await first.foldCommitted();

  const second = new WindowState(store, 'job', { runId: 'r2' });
  await second.completedIntervals();
  await second.writePending(unit, 0, 20, ['t/0-20.ndjson']);
  await store.put('t/0-20.ndjson', 'new');
  await second.writeCompleted(record(unit, 0, 20, 'r2', ['t/0-20.ndjson']));

  const seen = async () => {
    const reader = new WindowState(store, 'job');
    const intervals = (await reader.completedIntervals()).get(unit);
    const records: [number, number, string][] = [];
    for await (const r of reader.completedRecords()) records.push([r.start, r.end, r.run_id]);
    return { intervals, records };
  };
  const want = {
    intervals: [
      { start: 0, end: 20 },
      { start: 20, end: 30 },
    ],
    records: [
      [0, 20, 'r2'],
      [20, 30, 'r1'],
    ],
  };
  expect(await seen()).toEqual(want);
  await second.foldCommitted();
  expect(markersOf(store, 'job')).toEqual([]);
  expect(await seen()).toEqual(want);
  const data: string[] = [];
  for await (const o of store.list('t/')) data.push(o.key);
  expect(data.sort()).toEqual(['t/0-20.ndjson', 't/20.ndjson']);
});

it('many folds keep few segments per unit and every record', async () => {
  const store = fresh();
  const unit = 'transactions/0xabc/1/time';
  for (let run = 0; run < 30; run++) {
    const state = new WindowState(store, 'job', { runId: `r${run}` });
    await commitWindows(state, unit, run * 80, 8, `r${run}`);
    await state.foldCommitted();
  }
  const segments = readdirSync(join(store.location, '_state/job/segments'), { recursive: true }).filter((f) => String(f).endsWith('.json'));
  expect(segments.length).toBeLessThanOrEqual(6);
  const reader = new WindowState(store, 'job');
  const records: WindowRecord[] = [];
  for await (const r of reader.completedRecords()) records.push(r);
  expect(records).toHaveLength(240);
  expect(records.map((r) => r.start)).toEqual(Array.from({ length: 240 }, (_, i) => i * 10));
  expect(new Set(records.map((r) => r.run_id)).size).toBe(30);
});

it('a window deleted from the state leaves its manifest, and reading a missing window finds nothing', async () => {
  const store = fresh();
  const unit = 'transactions/0xabc/1/time';
  const state = new WindowState(store, 'job', { runId: 'r1' });
  await commitWindows(state, unit, 0, 5, 'r1');
  await state.foldCommitted();
  await state.deleteCompleted(unit, 20, 30);
  const reader = new WindowState(store, 'job');
  expect((await reader.completedIntervals()).get(unit)!.map((w) => w.start)).toEqual([0, 10, 30, 40]);
  expect(await reader.readCompleted(unit, 20, 30)).toBeNull();
  expect((await reader.readCompleted(unit, 30, 40))?.run_id).toBe('r1');
});

it('a manifest that cannot be read is named, and the other units are still read', async () => {
  const store = fresh();
  const state = new WindowState(store, 'job', { runId: 'r1' });
  await commitWindows(state, 'transactions/0xaaa/1/time', 0, 3, 'r1');
  await commitWindows(state, 'transactions/0xbbb/1/time', 0, 3, 'r1');
  await state.foldCommitted();
  await store.put('_state/job/units/transactions/0xbbb/1/time.json', '{"format": 1, "windows": "torn');
  const bad: [string, string | null][] = [];
  const records: string[] = [];
  for await (const r of new WindowState(store, 'job').completedRecords((key, _problem, unit) => bad.push([key, unit])))
    records.push(`${r.unit_key} ${r.start}`);
  expect(bad).toEqual([['_state/job/units/transactions/0xbbb/1/time.json', 'transactions/0xbbb/1/time']]);
  expect(records).toEqual(['transactions/0xaaa/1/time 0', 'transactions/0xaaa/1/time 10', 'transactions/0xaaa/1/time 20']);
  await expect(new WindowState(store, 'job').completedIntervals()).rejects.toThrow(/cannot be read/);
});

it('a fold whose manifest write landed though it failed (an S3 answer lost in an outage) keeps the segment the manifest lists', async () => {
  const store = fresh();
  const unit = 'transactions/0xabc/1/time';
  const manifestKey = `_state/job/units/${unit}.json`;
  let manifestWrites = 0;
  // The second manifest write lands, then fails as S3 does when the gateway went away before answering.
  const flaky: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
    put: async (key: string, body: Buffer | string, opts?: Parameters<ObjectStore['put']>[2]) => {
      const out = await store.put(key, body, opts);
      if (key === manifestKey && ++manifestWrites === 2) throw new StoreUnavailableError('S3 unavailable (answer lost)');
      return out;
    },
  });
  const state = new WindowState(flaky, 'job', { runId: 'r1' });
  await commitWindows(state, unit, 0, 2, 'r1');
  await state.foldCommitted();
  // The second fold merges the two segments into one (each holds as many records): the manifest lists only that one.
  await commitWindows(state, unit, 20, 2, 'r1');
  await expect(state.foldCommitted()).rejects.toThrow(StoreUnavailableError);
  const reader = new WindowState(store, 'job');
  expect((await reader.completedIntervals()).get(unit)!.map((w) => w.start)).toEqual([0, 10, 20, 30]);
  const records: number[] = [];
  for await (const r of reader.completedRecords()) records.push(r.start);
  expect(records).toEqual([0, 10, 20, 30]);
});
