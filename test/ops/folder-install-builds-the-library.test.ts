/**
 * Issue 45.8: the library installed from a folder (`npm install <path>`) or a git URL failed with
 * ERR_MODULE_NOT_FOUND .../dist/index.js until `npm run build`: nothing built dist/. The package's
 * `prepare` script (scripts/prepare.js), which npm runs for both, builds it when it is missing or
 * older than the sources. Here a stand-in package folder (the real package.json's `prepare`, the
 * real scripts/prepare.js, a one-line build in place of tsc and esbuild) is installed from its
 * folder by a consumer project with the real npm, which then imports it by name; a folder whose
 * dependencies were never installed makes the install fail with the next step.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';

const REPO = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const tmp = useTempDir('folder-install-');

/** A package folder with the real prepare script; its "build" writes dist/index.js exporting `built`. */
async function standInPackage(dir: string, withDevDependencies: boolean): Promise<void> {
  const real = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
  const pkg = {
    name: 'insight-export',
    version: '0.0.0',
    type: 'module',
    main: 'dist/index.js',
    exports: real.exports,
    scripts: { prepare: real.scripts.prepare },
  };
  await mkdir(join(dir, 'scripts'), { recursive: true });
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify(pkg));
  await copyFile(join(REPO, 'scripts/prepare.js'), join(dir, 'scripts/prepare.js'));
  await writeFile(join(dir, 'src/index.ts'), 'export const built = true;\n');
  const build = `import { mkdirSync, writeFileSync } from 'node:fs';\nmkdirSync('dist', { recursive: true });\nwriteFileSync('dist/index.js', 'export const built = true;\\n');\n`;
  await writeFile(join(dir, 'scripts/build.ts'), build);
  if (withDevDependencies) {
    // tsx's CLI as the build runs it (node <tsx cli> scripts/build.ts): here it imports the script.
    await mkdir(join(dir, 'node_modules/tsx/dist'), { recursive: true });
    const tsx = `import { readFileSync } from 'node:fs';\nawait import('data:text/javascript,' + encodeURIComponent(readFileSync(process.argv[2], 'utf8')));\n`;
    await writeFile(join(dir, 'node_modules/tsx/dist/cli.mjs'), tsx);
  }
}

async function consumerInstalling(name: string, pkgDir: string): Promise<{ app: string; install: Promise<unknown> }> {
  const app = join(tmp.dir, name);
  await mkdir(app, { recursive: true });
  await writeFile(join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module' }));
  const install = run('npm', ['install', pkgDir, '--no-audit', '--no-fund', '--foreground-scripts'], { cwd: app });
  return { app, install };
}

it('npm install <folder> builds dist/ and the package imports by name', async () => {
  const pkgDir = join(tmp.dir, 'checkout');
  await standInPackage(pkgDir, true);
  const { app, install } = await consumerInstalling('consumer', pkgDir);
  await install;
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', "const m = await import('insight-export'); console.log(m.built);"],
    { cwd: app },
  );
  expect(stdout.trim()).toBe('true');
}, 60_000);

it('a folder with no dependencies installed fails the install, saying to run npm install there', async () => {
  const pkgDir = join(tmp.dir, 'bare-clone');
  await standInPackage(pkgDir, false);
  const { install } = await consumerInstalling('consumer-of-bare', pkgDir);
  const failure = await install.then(
    () => null,
    (e: { stderr: string; stdout: string }) => e.stderr + e.stdout,
  );
  expect(failure).toContain('run `npm install` there first');
}, 60_000);
