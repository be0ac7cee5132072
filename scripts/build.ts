/**
 * `npm run build [-- --outDir <dir>]`: the library compiled by tsc (tsconfig.build.json: JavaScript
 * and declarations) into dist/, then the CLI as one bundle, dist/bin/cli.js, the `insight-export` bin.
 * Node's loader resolves, reads and links every module file on its own; a cron run of a complete
 * job spent ~0.25 s of its ~1 s start doing that for ~250 small files (zod, yaml, undici, yargs and
 * our own). Bundled, the run starts in ~0.75 s. Each command's code stays in its own chunk, loaded
 * when the command runs.
 * Left outside the bundle, loaded from node_modules when used: native or WebAssembly code (DuckDB,
 * zstd), packages large enough that only some commands load them (the AWS SDK, viem, the Parquet
 * libraries, ENS normalisation), and pino, whose transports load files by path.
 */
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

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

const OUTSIDE_THE_BUNDLE = [
  '@duckdb/node-api',
  '@bokuweb/zstd-wasm',
  '@aws-sdk/*',
  'viem',
  'hyparquet',
  'hyparquet-writer',
  '@adraffy/ens-normalize',
  'pino',
  'pino-pretty',
];

await build({
  entryPoints: { cli: path.join(REPO, 'src/cli.ts') },
  outdir: path.join(outDir, 'bin'),
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: OUTSIDE_THE_BUNDLE,
  // CommonJS dependencies in an ESM bundle call require() for Node's built-in modules.
  banner: {
    js: "import { createRequire as createRequireForBundle } from 'node:module';\nconst require = createRequireForBundle(import.meta.url);",
  },
  logLevel: 'warning',
  sourcemap: false,
});
