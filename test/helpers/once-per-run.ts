import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

const BUILD_TIMEOUT_MS = 240_000;

/**
 * Makes `name` (a file or a folder) in the run's folder of test/setup/test-cli.ts once per test run
 * and returns its path: the first caller claims it (mkdir is atomic) and runs `make` into a partial
 * path renamed when complete; the other callers (other test files, in other workers) wait for it,
 * or fail with the first caller's error. Teardown of the setup removes it.
 */
export async function oncePerRun(name: string, make: (partialPath: string) => Promise<void>): Promise<string> {
  const dir = inject('testCliDir');
  if (!dir) throw new Error('No run folder: test/setup/test-cli.ts is not registered as a vitest globalSetup');
  const path = join(dir, name);
  const failed = join(dir, `${name}.failed.txt`);
  const claimed = await mkdir(join(dir, `${name}.claimed`)).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return false;
      throw err;
    },
  );
  if (claimed) {
    try {
      await make(join(dir, `${name}.partial`));
      await rename(join(dir, `${name}.partial`), path);
    } catch (err) {
      await writeFile(failed, String((err as Error).stack ?? err));
      throw err;
    }
    return path;
  }
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  while (!existsSync(path)) {
    if (existsSync(failed)) throw new Error(`${name} (made once per test run) failed:\n${readFileSync(failed, 'utf8')}`);
    if (Date.now() > deadline)
      throw new Error(`${name} (made once per test run, ${path}) was not ready within ${BUILD_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
  return path;
}
