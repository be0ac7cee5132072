/**
 * `npm run build [-- --outDir <dir>]`: the library compiled by tsc (tsconfig.build.json: JavaScript
 * and declarations) into dist/, then the CLI as one bundle with a chunk per command, dist/bin/cli.js,
 * the `insight-export` bin (scripts/cli-bundle.ts says what is bundled and why).
 * The sandbox package (packages/sandbox, `@insight-export/sandbox`) ships as TypeScript in the
 * repository: the library gets it as dist/sandbox/ (its entries bundled, importing the product's
 * dist/shared-with-sandbox.js, the one module it shares), and the library's imports of the package
 * name point there; the CLI bundle holds it like any other module.
 */
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

await bundleTheSandboxForTheLibrary(outDir);

await bundleCli(path.join(REPO, 'src/cli.ts'), path.join(outDir, 'bin'));

/** dist/sandbox/index.js and rpc.js from the package's entries, and the library's imports of the package pointed at them. */
async function bundleTheSandboxForTheLibrary(dist: string): Promise<void> {
  const sandboxDir = path.join(dist, 'sandbox');
  rmSync(sandboxDir, { recursive: true, force: true });
  await build({
    entryPoints: { index: path.join(REPO, 'packages/sandbox/src/index.ts'), rpc: path.join(REPO, 'packages/sandbox/src/rpc/index.ts') },
    outdir: sandboxDir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    plugins: [
      {
        name: 'shared-with-sandbox',
        setup(b) {
          b.onResolve({ filter: /shared-with-sandbox\.js$/ }, () => ({ path: '../shared-with-sandbox.js', external: true }));
        },
      },
    ],
    logLevel: 'warning',
    sourcemap: false,
  });
  for (const file of jsFiles(dist)) {
    if (file.startsWith(sandboxDir + path.sep) || file.startsWith(path.join(dist, 'bin') + path.sep)) continue;
    const text = readFileSync(file, 'utf8');
    const entry = (name: string) => {
      const rel = path.relative(path.dirname(file), path.join(sandboxDir, name));
      return `'${rel.startsWith('.') ? rel : `./${rel}`}'`;
    };
    const pointed = text
      .replaceAll("'@insight-export/sandbox/rpc'", entry('rpc.js'))
      .replaceAll("'@insight-export/sandbox'", entry('index.js'));
    if (pointed !== text) writeFileSync(file, pointed);
  }
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(path.join(dir, e.name)) : e.name.endsWith('.js') ? [path.join(dir, e.name)] : [],
  );
}
