/**
 * The reorganisation check (src/state/reorg-check.ts) against a chain whose hashes a test sets:
 * windows of 10 blocks with their edges, committed before and after the chain changes. A matching
 * newer edge never vouches for windows read before it; the windows a check found still the chain's
 * are recorded (by their markers' ETags), so the next check asks only the windows committed since
 * (within the horizon) and the newest recorded edge; a window exported again since is asked again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import type { Interval } from '../../src/plan/index.js';
import type { BlockLookup } from '../../src/source/block-by-number.js';
import { checkReorgs } from '../../src/state/reorg-check.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';

const UNIT = 'transactions/0xabc/1/block';
let dir: string;

/** The chain: blocks from `fork` on carry the branch's hashes. */
const chain = { branch: 0, fork: Infinity };
const hashAt = (n: number, branch = n >= chain.fork ? chain.branch : 0) =>
  `0x${branch.toString(16).padStart(2, '0')}${n.toString(16).padStart(62, '0')}`;
const asked: number[] = [];
/** A fresh lookup per check, as each run has its own cache (blocks asked by number are counted in `asked`). */
const lookup = (): BlockLookup =>
  ({
    block: async (_chainId: number, n: number) => {
      asked.push(n);
      return { block_number: n, block_hash: hashAt(n), block_timestamp: n * 12 };
    },
    // Asked by hash (a match that bounds a reorganisation found): whether the chain has it now.
    isCurrent: async (_chainId: number, edge: { block_number: number; block_hash: string }) =>
      hashAt(edge.block_number) === edge.block_hash,
  }) as unknown as BlockLookup;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reorg-check-'));
  chain.branch = 0;
  chain.fork = Infinity;
  asked.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Commits window [start, start + 10) with the edge the chain has now (a window is read after its edge). */
async function commit(state: WindowState, start: number, runId = 'r1'): Promise<void> {
  const end = start + 10;
  await state.commit({
    unit_key: UNIT,
    start,
    end,
    files: [],
    run_id: runId,
    edge: { block_number: end - 1, block_hash: hashAt(end - 1) },
  });
}

/** Completed markers the last check read. */
let markersRead = 0;

/** One run's check: lists the state as a run does, checks, records what it found. */
async function check(horizon = 1000): Promise<{ again: Interval[]; asked: number[] }> {
  const store = new LocalStore(dir);
  const get = store.get.bind(store);
  markersRead = 0;
  store.get = (key) => {
    if (key.includes('/completed/')) markersRead++;
    return get(key);
  };
  const state = new WindowState(store, 'job');
  const completed = await state.completedIntervals();
  asked.length = 0;
  const r = await checkReorgs({ state, completed, owns: () => true, blocks: lookup(), horizon: () => horizon, logger: silentLogger });
  for (const [unitKey, c] of r.checked) await state.writeChecked(unitKey, { checked_at: 'now', ...c });
  return { again: r.reorgs.flatMap((x) => x.windows), asked: [...asked].sort((a, b) => a - b) };
}

it('windows read before a reorganisation under a newer window of the new branch are found', async () => {
  const state = new WindowState(new LocalStore(dir), 'job');
  for (let s = 0; s < 60; s += 10) await commit(state, s);
  // The chain reorganises from block 25 while the run goes on: the next window records the new branch.
  chain.branch = 1;
  chain.fork = 25;
  await commit(state, 60);
  const found = await check();
  expect(found.again).toEqual([
    { start: 20, end: 30 },
    { start: 30, end: 40 },
    { start: 40, end: 50 },
    { start: 50, end: 60 },
  ]);
});

it('the next check asks the windows committed since and the newest recorded edge, not the others', async () => {
  const state = new WindowState(new LocalStore(dir), 'job');
  for (let s = 0; s < 60; s += 10) await commit(state, s);
  // First check: nothing recorded yet, every window within the horizon is asked.
  expect((await check()).asked).toEqual([9, 19, 29, 39, 49, 59]);
  // Nothing committed since: the newest recorded edge proves them all.
  expect(await check()).toEqual({ again: [], asked: [59] });
  await commit(state, 60, 'r2');
  expect(await check()).toEqual({ again: [], asked: [59, 69] });
  expect(await check()).toEqual({ again: [], asked: [69] });
  // Only windows within the horizon of the newest edge are asked: below it they are final.
  await commit(state, 70, 'r3');
  await commit(state, 80, 'r3');
  expect(await check(35)).toEqual({ again: [], asked: [69, 79, 89] });
  // A quiet check reads no window marker: the record has the edges, and where the horizon starts.
  expect(await check(35)).toEqual({ again: [], asked: [89] });
  expect(markersRead).toBe(0);
});

it('a reorganisation after a check is found by walking the recorded windows down to the fork', async () => {
  const state = new WindowState(new LocalStore(dir), 'job');
  for (let s = 0; s < 60; s += 10) await commit(state, s);
  await check();
  chain.branch = 2;
  chain.fork = 33;
  const found = await check();
  expect(found.again).toEqual([
    { start: 30, end: 40 },
    { start: 40, end: 50 },
    { start: 50, end: 60 },
  ]);
  expect(found.asked).toEqual([29, 39, 49, 59]);
});

it('a window exported again since the check is asked again, although its interval was recorded', async () => {
  const state = new WindowState(new LocalStore(dir), 'job');
  for (let s = 0; s < 60; s += 10) await commit(state, s);
  await check();
  // Window [10, 20) alone is exported again while the chain is briefly on another branch, which
  // then loses: the newest recorded edge matches again, but that window holds the lost branch.
  chain.branch = 3;
  chain.fork = 15;
  await commit(state, 10, 'r2');
  chain.branch = 0;
  chain.fork = Infinity;
  const found = await check();
  expect(found.asked).toEqual([19, 59]);
  expect(found.again).toEqual([{ start: 10, end: 20 }]);
});
