/**
 * A unit's settled record (`_state/<job>/settled/<unit>.json`, src/state/settled-windows.ts):
 * writers of one unit (shards) that update it at once each keep their windows (conditional writes,
 * retried); a window added to one list leaves the other; a window its writer no longer keeps (it
 * was exported again since) is dropped; a record that is not one is reported and read as empty
 * (its windows are recounted), and the next write replaces it.
 */
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../src/store/local.js';
import { SettledWindows } from '../../src/state/settled-windows.js';
import { windowKey } from '../../src/plan/index.js';
import { useTempDir } from '../helpers/temp-dir.js';

const UNIT = 'transactions/0xabc/1/time';
const DAY = 86_400;
const tmp = useTempDir('settled-');
const day = (i: number, run = 'run-a') => ({ start: i * DAY, end: (i + 1) * DAY, run_id: run });
const keys = (m: Map<string, string>) => [...m.entries()].sort();
const key = (i: number) => windowKey({ start: i * DAY, end: (i + 1) * DAY });

describe('settled records', () => {
  it('writers updating one unit at once each keep their windows', async () => {
    const store = new LocalStore(`${tmp.dir}/race`);
    const records = new SettledWindows(store, '_state/job');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => records.update(UNIT, { settled: [day(i, `run-${i % 2}`)], recounted: [] }, () => true)),
    );
    const read = await records.read(UNIT);
    expect(read.problem).toBeUndefined();
    expect(read.settled.size).toBe(8);
    expect(read.settled.get(key(3))).toBe('run-1');
  });

  it('a window moves from recounted to settled, and one exported again since is dropped', async () => {
    const store = new LocalStore(`${tmp.dir}/lists`);
    const records = new SettledWindows(store, '_state/job');
    await records.update(UNIT, { settled: [day(0)], recounted: [day(1), day(2)] }, () => true);
    // Day 2 was exported again by run-b: the writer no longer keeps run-a's window there.
    await records.update(UNIT, { settled: [day(1)], recounted: [] }, (w) => !(w.start === 2 * DAY && w.run_id === 'run-a'));
    const read = await records.read(UNIT);
    expect(keys(read.settled)).toEqual([
      [key(0), 'run-a'],
      [key(1), 'run-a'],
    ]);
    expect(keys(read.recounted)).toEqual([]);
  });

  it('a record that is not one reads as empty with the reason, and the next write replaces it', async () => {
    const store = new LocalStore(`${tmp.dir}/bad`);
    const records = new SettledWindows(store, '_state/job');
    await store.put(records.key(UNIT), '{"format":1,"unit_key":"other","settled":[]}');
    const bad = await records.read(UNIT);
    expect(bad.settled.size + bad.recounted.size).toBe(0);
    expect(bad.problem).toMatch(/not a settled record of unit/);
    await records.update(UNIT, { settled: [day(4)], recounted: [] }, () => true);
    const read = await records.read(UNIT);
    expect(read.problem).toBeUndefined();
    expect(keys(read.settled)).toEqual([[key(4), 'run-a']]);
  });
});
