/**
 * `npm run build [-- --outDir <dir>]`: the library compiled by tsc (tsconfig.build.json: JavaScript
 * and declarations) into dist/, then the CLI as one bundle with a chunk per command, dist/bin/cli.js,
 * the `insight-export` bin (scripts/cli-bundle.ts says what is bundled and why).
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleCli } from './cli-bundle.js';

const REPO = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { outDir: { type: 'string' } } });
const outDir = path.resolve(REPO, values.outDir ?? 'dist');

// Chunk names carry a content hash: without this, every build would leave the last one's beside its own.
rmSync(path.join(outDir, 'bin'), { recursive: true, force: true });

execFileSync(
  process.execPath,
  [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', path.join(REPO, 'tsconfig.build.json'), '--outDir', outDir],
  {
    stdio: 'inherit',
  },
);

await bundleCli(path.join(REPO, 'src/cli.ts'), path.join(outDir, 'bin'));
