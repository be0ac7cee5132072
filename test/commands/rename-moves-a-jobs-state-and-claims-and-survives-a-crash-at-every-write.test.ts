/**
 * A job renamed in its file (edits -> edits-v2) at a destination it exported to: before `rename`,
 * the renamed job's run is refused (exit 2, partitions claimed by the old name) and `release` of
 * the old name is refused too. `rename --old-name` moves the state and the claims: the next run exports
 * nothing again, `verify` of the new name is complete over the same files, the old name has no
 * state left. A rename killed at any write leaves one name whole, and the command given again
 * finishes it.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { renameJob } from '../../src/state/rename-job.js';
import { openStore } from '../../src/store/open-store.js';
import type { ObjectStore } from '../../src/store/store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { Crash, crashingStore } from '../helpers/crashing-store.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from '../reliability/harness.js';

const sandbox = useSandbox();
const tmp = useTempDir('rename-job-');
const PARTITIONING = '{dataset}/chain_id={chain_id}/date={date}';

function jobOf(name: string, out: string) {
  return {
    name,
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    output: { format: 'ndjson', destination: out },
  };
}

/** The state objects of a job (no lease entry, no rename record), key relative to its folder -> body. */
async function stateOf(store: ObjectStore, job: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const o of store.list(`_state/${job}/`)) {
    const rel = o.key.slice(`_state/${job}/`.length);
    if (/^lease.*\.json$/.test(rel) || rel === 'renamed-from.json') continue;
    out.set(rel, (await store.get(o.key))!.body.toString('utf8'));
  }
  return out;
}

async function claimHolders(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list('_state/_owners/')) out.push(o.key.split('/').at(-1)!);
  return out.sort();
}

it('rename moves the state and claims: the renamed job runs and verifies over the same files', { timeout: 120_000 }, async () => {
  const out = join(tmp.dir, 'cli', 'out');
  const oldFile = await writeJob(join(tmp.dir, 'cli'), jobOf('edits', out), 'old.yaml');
  const newFile = await writeJob(join(tmp.dir, 'cli'), jobOf('edits-v2', out), 'new.yaml');
  expect((await runCli(['run', oldFile, '--log-level', 'error'])).code).toBe(0);

  const refused = await runCli(['run', newFile, '--log-level', 'error']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('Another job already exports these partitions');

  const renamed = await runCli(['rename', newFile, '--old-name', 'edits', '--json', '--log-level', 'error']);
  expect(renamed.code, renamed.stderr).toBe(0);
  const r = JSON.parse(renamed.stdout) as { from: string; to: string; claims: number; state_objects: number };
  expect(r).toMatchObject({ from: 'edits', to: 'edits-v2', claims: 2 });
  expect(r.state_objects).toBeGreaterThan(0);

  const again = await runCli(['run', newFile, '--json', '--log-level', 'error']);
  expect(again.code, again.stderr).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ rows: 0 });
  const verify = await runCli(['verify', newFile, '--json', '--log-level', 'error']);
  expect(verify.code, verify.stdout).toBe(0);
  expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, windows: { completed: 4, missing: 0 } });

  const store = await openStore(out);
  expect(await stateOf(store, 'edits')).toEqual(new Map());
  expect(await claimHolders(store)).toEqual(['edits-v2.json', 'edits-v2.json']);
  // The old name is free of state: its run would export its windows again, so it is refused on the claims.
  expect((await runCli(['run', oldFile, '--log-level', 'error'])).code).toBe(2);
});

it('a rename killed at any write leaves one name whole, and given again finishes', { timeout: 120_000 }, async () => {
  const seed = join(tmp.dir, 'seed');
  const seedFile = await writeJob(tmp.dir, jobOf('edits', seed), 'seed.yaml');
  expect((await runCli(['run', seedFile, '--log-level', 'error'])).code).toBe(0);
  const original = await stateOf(await openStore(seed), 'edits');
  // Under the new name, the manifests name their segments under _state/edits-v2/.
  const moved = new Map([...original].map(([k, v]) => [k, v.replaceAll('"_state/edits/', '"_state/edits-v2/')]));
  expect([...moved.values()].some((v, i) => v !== [...original.values()][i])).toBe(true);

  const countDir = join(tmp.dir, 'count');
  cpSync(seed, countDir, { recursive: true });
  const counting = crashingStore(await openStore(countDir), Number.MAX_SAFE_INTEGER, false);
  await renameJob(counting, 'edits', 'edits-v2', PARTITIONING);
  const writes = counting.writes;
  expect(writes).toBeGreaterThan(original.size);

  for (let budget = 0; budget < writes; budget++) {
    for (const after of [false, true]) {
      const dir = join(tmp.dir, `crash-${budget}-${after}`);
      cpSync(seed, dir, { recursive: true });
      await expect(renameJob(crashingStore(await openStore(dir), budget, after), 'edits', 'edits-v2', PARTITIONING)).rejects.toThrow(Crash);
      const store = await openStore(dir);
      const record = await store.get('_state/edits-v2/renamed-from.json');
      const step = record ? (JSON.parse(record.body.toString('utf8')) as { step: string }).step : null;
      const oldWhole = (await stateOf(store, 'edits')).size === original.size && (await claimHolders(store)).includes('edits.json');
      const newWhole = step !== null && step !== 'copying' && (await stateOf(store, 'edits-v2')).size === original.size;
      expect(oldWhole || newWhole, `crash at write ${budget} (${after ? 'after' : 'before'} it)`).toBe(true);

      const finished = await renameJob(store, 'edits', 'edits-v2', PARTITIONING);
      expect(finished.to).toBe('edits-v2');
      expect(await stateOf(store, 'edits-v2')).toEqual(moved);
      expect(await stateOf(store, 'edits')).toEqual(new Map());
      expect(await claimHolders(store)).toEqual(['edits-v2.json', 'edits-v2.json']);
    }
  }
});

it('a layout that names the job in its folders, or a new name already used, is refused', { timeout: 60_000 }, async () => {
  const dir = join(tmp.dir, 'refused');
  const file = await writeJob(tmp.dir, jobOf('edits', dir), 'refused.yaml');
  expect((await runCli(['run', file, '--log-level', 'error'])).code).toBe(0);
  const store = await openStore(dir);
  await expect(renameJob(store, 'edits', 'edits-v2', '{dataset}/job={job}/chain_id={chain_id}/date={date}')).rejects.toThrow(
    /folders named after the job/,
  );
  await store.put('_state/other/units/transactions/0xabc/1/time.json', '{}');
  await expect(renameJob(store, 'edits', 'other', PARTITIONING)).rejects.toThrow(/already has exported windows/);
  await expect(renameJob(store, 'gone', 'edits-v3', PARTITIONING)).rejects.toThrow(/has no state/);
  expect((await stateOf(store, 'edits')).size).toBeGreaterThan(0);
});
