/**
 * `npm run build [-- --outDir <dir>]`: the library compiled by tsc (tsconfig.build.json: JavaScript
 * and declarations) into dist/, then the CLI as one bundle with a chunk per command, dist/bin/cli.js,
 * the `insight-export` bin (scripts/cli-bundle.ts says what is bundled and why).
 * The sandbox package (packages/sandbox, `@insight-export/sandbox`) ships as TypeScript in the
 * repository: the library gets it as dist/sandbox/ (its entries bundled, importing the product's
 * dist/shared-with-sandbox.js, the one module it shares), and the library's imports of the package
 * name point there; the CLI bundle holds it like any other module. The package is private (a
 * devDependency: no registry has it), so the library's declarations cannot name it either: its
 * declarations are emitted into dist/sandbox/ beside its bundle (tsc --noCheck: the build's tsc above
 * has type-checked them, as the library imports them) and the library's .d.ts point there too.
 */
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
emitTheSandboxDeclarations(outDir);
pointTheLibraryAtTheSandbox(outDir);

await bundleCli(path.join(REPO, 'src/cli.ts'), path.join(outDir, 'bin'));

/** dist/sandbox/index.js and rpc.js from the package's entries. */
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
}

/**
 * The sandbox's declarations as dist/sandbox/**\/*.d.ts (index.d.ts beside index.js; rpc/index.d.ts),
 * their imports of src/shared-with-sandbox.js pointed at dist/shared-with-sandbox.js.
 */
function emitTheSandboxDeclarations(dist: string): void {
  const tmp = mkdtempSync(path.join(tmpdir(), 'sandbox-types-'));
  try {
    const entries = ['packages/sandbox/src/index.ts', 'packages/sandbox/src/rpc/index.ts'].map((e) => path.join(REPO, e));
    // Files named on the command line: tsc reads no tsconfig, so the options the build's are given here.
    const options = ['--noCheck', '--declaration', '--emitDeclarationOnly', '--rootDir', REPO, '--outDir', tmp, '--skipLibCheck'];
    const compiler = ['--target', 'ES2022', '--lib', 'ES2023', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--strict'];
    const more = ['--noUncheckedIndexedAccess', '--resolveJsonModule', '--esModuleInterop', '--types', 'node'];
    execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), ...options, ...compiler, ...more, ...entries], {
      stdio: 'inherit',
    });
    const sandboxDir = path.join(dist, 'sandbox');
    cpSync(path.join(tmp, 'packages/sandbox/src'), sandboxDir, { recursive: true });
    writeFileSync(path.join(sandboxDir, 'rpc.d.ts'), "export * from './rpc/index.js';\n");
    for (const file of filesEndingIn(sandboxDir, '.d.ts')) {
      const shared = path.relative(path.dirname(file), path.join(dist, 'shared-with-sandbox.js'));
      const text = readFileSync(file, 'utf8');
      const pointed = text.replace(/(['"])(?:\.\.\/)+src\/shared-with-sandbox\.js\1/g, `'${shared}'`);
      if (pointed !== text) writeFileSync(file, pointed);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The library's imports of the package name (.js and .d.ts) pointed at dist/sandbox/. */
function pointTheLibraryAtTheSandbox(dist: string): void {
  const sandboxDir = path.join(dist, 'sandbox');
  for (const file of [...filesEndingIn(dist, '.js'), ...filesEndingIn(dist, '.d.ts')]) {
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

function filesEndingIn(dir: string, ending: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesEndingIn(path.join(dir, e.name), ending) : e.name.endsWith(ending) ? [path.join(dir, e.name)] : [],
  );
}
