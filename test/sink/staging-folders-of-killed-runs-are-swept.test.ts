import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { thisProcess } from '../../src/process-identity.js';
import { createRunStagingDir, sweepDeadRunStagingDirs } from '../../src/sink/staging-dir.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('staging-sweep-');

/** The pid of a process of this machine that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

it('removes the folders of runs whose process is gone, and keeps live runs, other machines and foreign folders', async () => {
  const me = thisProcess();
  const dead = await createRunStagingDir(tmp.dir, '20261121T100000Z-0000dead', { ...me, pid: deadPid() });
  writeFileSync(join(dead, 'insight-export-1234.staged.ndjson'), '{"a":1}\n');
  const live = await createRunStagingDir(tmp.dir, '20261121T100001Z-00000a11', me);
  const compactDead = await createRunStagingDir(tmp.dir, 'compact-20261121T100002Z-0000c0de', { ...me, pid: deadPid() });
  const otherHost = await createRunStagingDir(tmp.dir, '20261121T100003Z-00000e15', { host: 'elsewhere', pid: deadPid(), bootId: 'b' });
  // A run killed before its owner file was complete: removed once a day old, not before.
  const unownedOld = join(tmp.dir, '20261120T100004Z-000001d1');
  const unownedNew = join(tmp.dir, '20261121T100005Z-000001d2');
  for (const d of [unownedOld, unownedNew]) mkdirSync(d);
  writeFileSync(join(unownedOld, 'owner.json'), '{"host":');
  const dayAgo = new Date(Date.now() - 25 * 3_600_000);
  utimesSync(unownedOld, dayAgo, dayAgo);
  // Not a run folder: never touched, whatever it holds.
  const foreign = join(tmp.dir, 'not-a-run');
  mkdirSync(foreign);

  const removed = await sweepDeadRunStagingDirs(tmp.dir);

  expect(removed.sort()).toEqual(['20261120T100004Z-000001d1', '20261121T100000Z-0000dead', 'compact-20261121T100002Z-0000c0de']);
  for (const d of [dead, compactDead, unownedOld]) expect(existsSync(d), d).toBe(false);
  for (const d of [live, otherHost, unownedNew, foreign]) expect(existsSync(d), d).toBe(true);
  expect(readdirSync(live)).toEqual(['owner.json']);
});

it('a staging directory that does not exist yet is nothing to sweep', async () => {
  await expect(sweepDeadRunStagingDirs(join(tmp.dir, 'missing'))).resolves.toEqual([]);
});
