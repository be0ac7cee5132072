/**
 * The commit protocol of a window that replaces completed windows (--force, --rewind, a changed
 * chunk), crashed before or after each of its writes and deletes, then recovered by the next
 * run's cleanPending: completed windows never overlap, every listed file exists, no data file is
 * left that no window lists, and a second attempt ends with exactly the new export. Twice: with the
 * old windows in their markers (a destination of an older version), and folded into the unit's
 * manifest with the commit folded too (every manifest and segment write a crash point), recovered
 * as a run recovers (cleanPending, then foldMarkers).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore, PutOptions } from '../../src/store/store.js';
import { WindowState } from '../../src/state/window-state.js';
import { windowRecord } from '../helpers/completed-windows.js';
import { useTempDir } from '../helpers/temp-dir.js';

const UNIT = 'transactions/0xabc/1/block';
const tmp = useTempDir('replace-crash-');

class Crash extends Error {}

/** A store that performs its first `budget` mutations and dies at the next one (before or after it). */
function crashingStore(inner: ObjectStore, budget: number, after: boolean): ObjectStore & { ops: number } {
  let ops = 0;
  const mutate = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (ops > budget) throw new Crash('dead');
    if (ops === budget) {
      ops++;
      if (after) {
        await fn();
      }
      throw new Crash('crash');
    }
    ops++;
    return fn();
  };
  return {
    get ops() {
      return ops;
    },
    location: inner.location,
    put: (k: string, b: Buffer | string, o?: PutOptions) => mutate(() => inner.put(k, b, o)),
    putFile: (k: string, p: string, o?: PutOptions) => mutate(() => inner.putFile(k, p, o)),
    delete: (k: string) => mutate(() => inner.delete(k)),
    deleteMany: (ks: string[]) => mutate(() => inner.deleteMany(ks)),
    get: (k: string) => inner.get(k),
    getStream: (k: string) => inner.getStream(k),
    head: (k: string) => inner.head(k),
    list: (p: string) => inner.list(p),
  };
}

const rec = (start: number, end: number, keys: string[], runId: string) =>
  windowRecord(UNIT, { start, end }, runId, keys, { bytes: 3, completedAt: 'then' });

const file = (w: [number, number], seq: number) =>
  `transactions/chain_id=1/0xabc__${String(w[0]).padStart(12, '0')}_${String(w[1]).padStart(12, '0')}__${String(seq).padStart(4, '0')}.ndjson`;

interface Scenario {
  name: string;
  old: { window: [number, number]; files: string[] }[];
  next: { window: [number, number]; files: string[] };
}

const scenarios: Scenario[] = [
  {
    name: 'one window replaces two pieces of earlier incremental runs',
    old: [
      { window: [0, 50], files: [file([0, 50], 0)] },
      { window: [50, 100], files: [file([50, 100], 0), file([50, 100], 1)] },
      { window: [100, 200], files: [file([100, 200], 0)] },
    ],
    next: { window: [0, 100], files: [file([0, 100], 0), file([0, 100], 1)] },
  },
  {
    name: 'the same window exported again with fewer files (overwrites the old keys)',
    old: [
      { window: [0, 100], files: [file([0, 100], 0), file([0, 100], 1), file([0, 100], 2)] },
      { window: [100, 200], files: [file([100, 200], 0)] },
    ],
    next: { window: [0, 100], files: [file([0, 100], 0), file([0, 100], 1)] },
  },
  {
    name: 'a window that is empty now replaces one that had rows',
    old: [
      { window: [0, 100], files: [file([0, 100], 0)] },
      { window: [100, 200], files: [file([100, 200], 0)] },
    ],
    next: { window: [0, 100], files: [] },
  },
];

type Layout = 'markers' | 'folded';

async function setUp(root: string, s: Scenario, layout: Layout): Promise<LocalStore> {
  const store = new LocalStore(root);
  const state = new WindowState(store, 'job', { runId: 'old-run' });
  for (const o of s.old) {
    for (const k of o.files) await store.put(k, 'old');
    await state.writeCompleted(rec(o.window[0], o.window[1], o.files, 'old-run'));
  }
  if (layout === 'folded') await state.foldCommitted();
  return store;
}

/** What export-windows does for one window: pending marker, uploads, completed marker (then the run's fold). */
async function commit(store: ObjectStore, s: Scenario, runId: string, layout: Layout): Promise<void> {
  const state = new WindowState(store, 'job', { runId });
  await state.completedIntervals();
  const [start, end] = s.next.window;
  if (s.next.files.length > 0) await state.writePending(UNIT, start, end, s.next.files);
  for (const k of s.next.files) await store.put(k, 'new');
  await state.writeCompleted(rec(start, end, s.next.files, runId));
  if (layout === 'folded') await state.foldCommitted();
}

/** What the next run does first. */
async function recover(store: ObjectStore, layout: Layout): Promise<void> {
  const state = new WindowState(store, 'job', { runId: 'recovery-run' });
  await state.cleanPending();
  if (layout === 'folded') await state.foldMarkers();
}

async function invariants(store: ObjectStore): Promise<{ intervals: [number, number][]; files: string[] }> {
  const state = new WindowState(store, 'job');
  const intervals = ((await state.completedIntervals()).get(UNIT) ?? []).map((i): [number, number] => [i.start, i.end]);
  for (let i = 1; i < intervals.length; i++)
    expect(intervals[i]![0], `overlap ${JSON.stringify(intervals)}`).toBeGreaterThanOrEqual(intervals[i - 1]![1]);
  const listed = new Set<string>();
  for await (const r of state.completedRecords()) for (const f of r.files) listed.add(f.key);
  const files: string[] = [];
  for await (const o of store.list('transactions/')) files.push(o.key);
  expect(files.sort(), 'every data file is listed by a completed window, and every listed file exists').toEqual([...listed].sort());
  const pending: string[] = [];
  for await (const o of store.list('_state/job/pending/')) pending.push(o.key);
  expect(pending).toEqual([]);
  return { intervals, files: files.sort() };
}

describe.each(scenarios.flatMap((s) => (['markers', 'folded'] as const).map((layout) => ({ ...s, layout }))))('$name ($layout)', (s) => {
  const { layout } = s;
  it('a crash before or after any write recovers to a consistent state, and a retry completes', async () => {
    // Count the writes of an undisturbed commit.
    const probe = crashingStore(await setUp(join(tmp.dir, `${layout}-${s.name.length}-probe`), s, layout), Number.MAX_SAFE_INTEGER, false);
    await commit(probe, s, 'new-run', layout);
    const writes = probe.ops;
    const done = await invariants(probe);
    const untouched = s.old.filter((o) => o.window[0] >= s.next.window[1]);
    expect(done.intervals).toEqual([s.next.window, ...untouched.map((o) => o.window)]);
    let trials = 0;
    const outcomes = { rolledBack: 0, rolledForward: 0, dropped: 0 };
    for (let k = 0; k < writes; k++) {
      for (const after of [false, true]) {
        trials++;
        const root = join(tmp.dir, `${layout}-${s.name.length}-${k}-${after}`);
        const store = await setUp(root, s, layout);
        await expect(commit(crashingStore(store, k, after), s, 'new-run', layout)).rejects.toBeInstanceOf(Crash);
        // The next run: recovery first.
        await recover(store, layout);
        const rec1 = await invariants(store);
        const newDone = rec1.intervals.some((i) => i[0] === s.next.window[0] && i[1] === s.next.window[1]);
        const record = newDone ? await new WindowState(store, 'job').readCompleted(UNIT, ...s.next.window) : null;
        if (record?.run_id === 'new-run') outcomes.rolledForward++;
        else if (rec1.intervals.length === s.old.length) outcomes.rolledBack++;
        else outcomes.dropped++;
        // Files of a recovered state hold the content their window says (old or new, never mixed).
        for await (const r of new WindowState(store, 'job').completedRecords()) {
          const want = r.run_id === 'new-run' ? 'new' : 'old';
          for (const f of r.files) expect((await store.get(f.key))!.body.toString()).toBe(want);
        }
        // Retrying the export of the window (as the next run plans it) ends in the undisturbed result.
        await commit(store, s, 'retry-run', layout);
        const final = await invariants(store);
        expect(final.intervals).toEqual(done.intervals);
        expect(final.files).toEqual(done.files);
      }
    }
    console.log(
      `[replace-crash] ${s.name} (${layout}): ${trials} crash points over ${writes} writes; recovered ${JSON.stringify(outcomes)}`,
    );
    expect(outcomes.rolledForward + outcomes.rolledBack + outcomes.dropped).toBe(trials);
  });
});
