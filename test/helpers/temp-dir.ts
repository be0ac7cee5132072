import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useForFile } from './use-for-file.js';

/**
 * A fresh folder under the OS temp dir (named `<prefix>…`) for the calling test file: made before
 * its tests, removed with everything in it after them. Read `.dir` inside tests and hooks.
 */
export function useTempDir(prefix: string): { readonly dir: string } {
  return useForFile(
    'useTempDir()',
    async () => ({ dir: await mkdtemp(join(tmpdir(), prefix)) }),
    ({ dir }) => rm(dir, { recursive: true, force: true }),
  );
}
