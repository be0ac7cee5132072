/**
 * Issue 31.5: `npx insight-export --help`, as the README shows it, failed after `npm install`
 * ("insight-export: not found", exit 127): package.json's bin was the build, which only `npm run
 * build` makes. Here a checkout's layout (package.json, its bin, src/, node_modules, config/) gets
 * the bin link npm makes, and the command runs: from the sources when there is no build or the
 * build is older than they are, from the build when it is as new.
 */
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';
import { REPO } from './helpers.js';

const run = promisify(execFile);
const tmp = useTempDir('bin-after-install-');
const manifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
let link = '';
let checkout = '';

beforeAll(async () => {
  checkout = join(tmp.dir, 'checkout');
  await mkdir(checkout);
  await copyFile(join(REPO, 'package.json'), join(checkout, 'package.json'));
  const bin = manifest.bin['insight-export']!;
  // The bin must be a file of the checkout (tracked by git), not one a build makes.
  await run('git', ['ls-files', '--error-unmatch', bin], { cwd: REPO });
  await cp(join(REPO, dirname(bin)), join(checkout, dirname(bin)), { recursive: true });
  for (const dir of ['src', 'node_modules', 'config']) await symlink(join(REPO, dir), join(checkout, dir));
  // What npm links on install (node_modules/.bin/insight-export, or npx's cache).
  link = join(tmp.dir, 'insight-export');
  await symlink(join(checkout, bin), link);
});

const insightExport = (...args: string[]) => run(link, args, { cwd: tmp.dir, env: { ...process.env, NO_COLOR: '1' } });

it('runs with no build at all: --help lists the commands, --version the package version', async () => {
  const help = await insightExport('--help');
  for (const command of ['run', 'plan', 'validate', 'verify', 'sandbox']) expect(help.stdout).toContain(`insight-export ${command}`);
  expect((await insightExport('--version')).stdout.trim()).toBe(manifest.version);
}, 60_000);

it('runs a build as new as the sources, and the sources when the build is older', async () => {
  const built = join(checkout, 'dist/bin/cli.js');
  await mkdir(dirname(built), { recursive: true });
  await writeFile(built, "process.stdout.write('the build\\n');\n");
  const later = new Date(Date.now() + 86_400_000);
  await utimes(built, later, later);
  expect((await insightExport('--version')).stdout).toBe('the build\n');
  const older = new Date('2000-01-01T00:00:00Z');
  await utimes(built, older, older);
  expect((await insightExport('--version')).stdout.trim()).toBe(manifest.version);
}, 60_000);
