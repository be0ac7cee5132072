import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { thisProcess } from '../../src/process-identity.js';
import { createRunStagingDir, sweepDeadRunStagingDirs } from '../../src/sink/staging-dir.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'staging-sweep-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The pid of a process of this machine that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

it('removes the folders of runs whose process is gone, and keeps live runs, other machines and foreign folders', async () => {
  const me = thisProcess();
  const dead = await createRunStagingDir(root, '20261121T100000Z-0000dead', { ...me, pid: deadPid() });
  writeFileSync(join(dead, 'insight-export-1234.staged.ndjson'), '{"a":1}\n');
  const live = await createRunStagingDir(root, '20261121T100001Z-00000a11', me);
  const compactDead = await createRunStagingDir(root, 'compact-20261121T100002Z-0000c0de', { ...me, pid: deadPid() });
  const otherHost = await createRunStagingDir(root, '20261121T100003Z-00000e15', { host: 'elsewhere', pid: deadPid(), bootId: 'b' });
  // A run killed before its owner file was complete: removed once a day old, not before.
  const unownedOld = join(root, '20261120T100004Z-000001d1');
  const unownedNew = join(root, '20261121T100005Z-000001d2');
  for (const d of [unownedOld, unownedNew]) mkdirSync(d);
  writeFileSync(join(unownedOld, 'owner.json'), '{"host":');
  const dayAgo = new Date(Date.now() - 25 * 3_600_000);
  utimesSync(unownedOld, dayAgo, dayAgo);
  // Not a run folder: never touched, whatever it holds.
  const foreign = join(root, 'not-a-run');
  mkdirSync(foreign);

  const removed = await sweepDeadRunStagingDirs(root);

  expect(removed.sort()).toEqual(['20261120T100004Z-000001d1', '20261121T100000Z-0000dead', 'compact-20261121T100002Z-0000c0de']);
  for (const d of [dead, compactDead, unownedOld]) expect(existsSync(d), d).toBe(false);
  for (const d of [live, otherHost, unownedNew, foreign]) expect(existsSync(d), d).toBe(true);
  expect(readdirSync(live)).toEqual(['owner.json']);
});

it('a staging directory that does not exist yet is nothing to sweep', async () => {
  await expect(sweepDeadRunStagingDirs(join(root, 'missing'))).resolves.toEqual([]);
});
