/**
 * Issue 14.6: a local destination under a regular file (or where this user cannot create
 * folders) is bad input: a typed error naming the file in the way, exit 2, no stack trace.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeOneDayWalletJob } from '../helpers/one-day-wallet-job.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('dest-file-');

const jobFile = () => writeOneDayWalletJob(tmp.dir, sandbox.data.wallets[0]!.address);

describe('a local destination that cannot be a folder', () => {
  it('under a regular file: exit 2 naming the file', async () => {
    const blocker = join(tmp.dir, 'a-file');
    await writeFile(blocker, 'x');
    const r = await runCli([
      'run',
      await jobFile(),
      '--base-url',
      sandbox.url,
      '--destination',
      join(blocker, 'out'),
      '--log-level',
      'silent',
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/internal error|at async/);
    expect(r.stderr).toContain(`${blocker} is a file, not a folder`);
  });
});
