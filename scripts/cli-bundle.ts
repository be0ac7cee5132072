/**
 * The CLI's bundle: how `npm run build` makes dist/bin/ (scripts/build.ts) and how the tests make
 * their build with crash points (test/reliability/harness.ts), so both start the same way.
 * Node's loader resolves, reads and links every module file on its own; a cron run of a complete
 * job spent ~0.25 s of its ~1 s start doing that for ~250 small files (zod, yaml, undici, yargs and
 * our own). Bundled, the run starts in ~0.75 s. Each command's code stays in its own chunk, loaded
 * when the command runs.
 * Left outside the bundle, loaded from node_modules when used: native or WebAssembly code (DuckDB,
 * zstd), packages large enough that only some commands load them (the AWS SDK, the Parquet
 * libraries, ENS normalisation), and pino, whose transports load files by path. viem is bundled:
 * the product calls three of its functions (parseAbi, decodeAbiParameters, decodeEventLog), and
 * its package entry loads ~350 modules for them (~0.35 s of CPU, in every run that decodes a
 * transaction or an event); bundled, only those functions and what they use are in the chunk of
 * the code that decodes (a run of alice.eth's transactions: ~1.76 -> ~1.47 CPU-s). A bundle without
 * chunks would import every one of those at its start, whatever the command (a test build made
 * that way took ~0.85 s of CPU for `--version`, the chunked one ~0.09 s).
 */
import { build } from 'esbuild';

const OUTSIDE_THE_BUNDLE = [
  '@duckdb/node-api',
  '@bokuweb/zstd-wasm',
  '@aws-sdk/*',
  'hyparquet',
  'hyparquet-writer',
  '@adraffy/ens-normalize',
  'pino',
  'pino-pretty',
];

/**
 * At the top of every chunk: CommonJS dependencies in an ESM bundle call require() for Node's
 * built-in modules; and Node >= 22.1 keeps the code it compiles on disk for the next start
 * (module.enableCompileCache: the command's chunks and the packages they load, compiled once per
 * machine; later calls are no-ops). Node 20 has no such cache and starts as before.
 */
const BANNER = [
  "import nodeModuleForBundle from 'node:module';",
  'nodeModuleForBundle.enableCompileCache?.();',
  'const require = nodeModuleForBundle.createRequire(import.meta.url);',
].join('\n');

/** Bundles `entry` into `outDir` as `cli.js` (the name src/cli.ts runs on) and its chunks. */
export async function bundleCli(entry: string, outDir: string): Promise<void> {
  await build({
    entryPoints: { cli: entry },
    outdir: outDir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: OUTSIDE_THE_BUNDLE,
    banner: { js: BANNER },
    logLevel: 'warning',
    sourcemap: false,
  });
}
