/**
 * A delete prunes the folders it leaves empty while another writer of the same run creates them
 * (one window's pending marker removed as the next one is written). When mkdir answers EEXIST and
 * the folder is gone again by the time it is looked at, it is created again: never reported as
 * "a file stands where a folder is needed", which failed a run's window.
 */
import { mkdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeDirs, type FolderOps } from '../../src/make-dirs.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('mkdir-prune-race-');

/** Node's own calls, except that `times` mkdirs of `folder` meet the race: another writer creates it first, a delete prunes it before the check. */
function racing(folder: string, times: number): FolderOps & { raced: number } {
  const ops = {
    raced: 0,
    mkdir: async (d: string) => {
      if (d !== folder || ops.raced >= times) return mkdir(d);
      ops.raced++;
      await mkdir(d);
      const result = await mkdir(d).catch((err: unknown) => err);
      await rmdir(d);
      if (result instanceof Error) throw result;
      return result;
    },
    stat,
  };
  return ops;
}

it('a folder created by another writer and pruned before the check is created again', async () => {
  const ops = racing(join(tmp.dir, 'a', 'b'), 2);
  await makeDirs(join(tmp.dir, 'a', 'b', 'c'), ops);
  expect(ops.raced).toBe(2);
  expect((await stat(join(tmp.dir, 'a', 'b', 'c'))).isDirectory()).toBe(true);
});

it('a file where the folder should be is still refused (ENOTDIR)', async () => {
  await mkdir(join(tmp.dir, 'f'));
  await writeFile(join(tmp.dir, 'f', 'x'), '');
  await expect(makeDirs(join(tmp.dir, 'f', 'x', 'y'), racing(join(tmp.dir, 'none'), 0))).rejects.toMatchObject({ code: 'ENOTDIR' });
});
