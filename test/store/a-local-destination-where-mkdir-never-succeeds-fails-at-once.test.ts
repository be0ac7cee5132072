/**
 * Issue 14.6: a local destination (or staging directory) on a file system where mkdir never
 * succeeds used to spin for ever (Node's recursive mkdir loops on procfs, which answers ENOENT
 * under an existing folder). Every such refusal now ends at once: a typed error naming the
 * folder, exit 2, no stack trace. Folders created concurrently are no error.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirs } from '../../src/make-dirs.js';
import { DestinationUnusableError } from '../../src/store/errors.js';
import { LocalStore } from '../../src/store/local.js';
import { makeStagingDir, StagingDirUnusableError } from '../../src/sink/staging-dir.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeOneDayWalletJob } from '../helpers/one-day-wallet-job.js';

const sandbox = useSandbox({ seed: 42, transactions: 1_000 });
const tmp = useTempDir('dest-no-mkdir-');
/** procfs: mkdir of a new folder answers ENOENT under /proc/self, which exists. */
const NO_MKDIR = `/proc/self/insight-export-${process.pid}/out`;

const jobFile = () => writeOneDayWalletJob(tmp.dir, sandbox.data.wallets[0]!.address);

describe('a destination where mkdir never succeeds', () => {
  it('the store refuses its first write with DestinationUnusableError', async () => {
    const store = new LocalStore(NO_MKDIR);
    const err = await store.put('a/b.json', '{}').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DestinationUnusableError);
    expect((err as DestinationUnusableError).message).toContain(NO_MKDIR);
    expect((err as DestinationUnusableError).message).toMatch(/ENOENT/);
  });

  it('a run exits 2 naming the destination', { timeout: 60_000 }, async () => {
    const r = await runCli(['run', await jobFile(), '--base-url', sandbox.url, '--destination', NO_MKDIR, '--log-level', 'silent']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`The destination ${NO_MKDIR} cannot be used as a folder`);
    expect(r.stderr).not.toMatch(/internal error|at async/);
  });

  it('a staging directory there: exit 2 naming it', { timeout: 60_000 }, async () => {
    const err = await makeStagingDir(join(NO_MKDIR, 'staging')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StagingDirUnusableError);
    const r = await runCli([
      'run',
      await jobFile(),
      '--base-url',
      sandbox.url,
      '--destination',
      join(tmp.dir, 'out'),
      '--staging-dir',
      NO_MKDIR,
      '--log-level',
      'silent',
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('The staging directory cannot hold');
    expect(r.stderr).not.toMatch(/internal error|at async/);
  });
});

describe('makeDirs', () => {
  it('a file on the path is ENOTDIR', async () => {
    const file = join(tmp.dir, 'plain-file');
    await writeFile(file, 'x');
    await expect(makeDirs(join(file, 'a', 'b'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('folders created concurrently (EEXIST races) are no error', async () => {
    const deep = join(tmp.dir, 'race', 'a', 'b', 'c');
    await Promise.all([
      ...Array.from({ length: 16 }, () => makeDirs(deep)),
      ...Array.from({ length: 4 }, () => mkdir(join(tmp.dir, 'race', 'a'), { recursive: true })),
    ]);
    expect((await stat(deep)).isDirectory()).toBe(true);
  });
});
