/**
 * The bundle (scripts/cli-bundle.ts: dist/bin of `npm run build`, and the tests' build with crash
 * points that the suite's child runs use) keeps each command's code in its own chunk and the large
 * packages outside, loaded when a command uses them. A bundle without chunks imports every package
 * it leaves outside at its start whatever the command (the tests' one-file build did: ~0.85 s of CPU
 * for `--version`, in each of the suite's child runs). Seen through a module-resolution hook that
 * records every module the process resolves.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';
import { buildTestCli, REPO } from '../reliability/harness.js';

const run = promisify(execFile);
const tmp = useTempDir('bundled-start-');

const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.MODULE_TRACE, r.url + '\\n');
  return r;
}
`;

/** The packages of node_modules the bundled CLI resolved (not its own chunks, which sit in a dot folder of node_modules). */
async function packagesLoadedBy(args: string[], env: Record<string, string> = {}): Promise<{ packages: string[]; stdout: string }> {
  const cli = await buildTestCli();
  const hooks = join(tmp.dir, 'hooks.mjs');
  const register = join(tmp.dir, 'register.mjs');
  const trace = join(tmp.dir, 'trace.txt');
  await writeFile(hooks, HOOKS);
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  await writeFile(trace, '');
  const { stdout } = await run(process.execPath, ['--import', register, cli.path, ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, MODULE_TRACE: trace, ...env },
  });
  const packages = new Set<string>();
  for (const url of (await readFile(trace, 'utf8')).split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/.][^/]*)\//.exec(url);
    if (m) packages.add(m[1]!);
  }
  return { packages: [...packages].sort(), stdout };
}

it('--version loads no package at all', async () => {
  const { packages, stdout } = await packagesLoadedBy(['--version']);
  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
  expect(stdout.trim()).toBe(pkg.version);
  expect(packages).toEqual([]);
});

it('the crash points load only in a run that asks for one, and the S3 store (the AWS SDK) only with an S3 endpoint', async () => {
  const asked = await packagesLoadedBy(['--version'], { INSIGHT_TEST_COUNTS: join(tmp.dir, 'counts.json') });
  expect(JSON.parse(await readFile(join(tmp.dir, 'counts.json'), 'utf8'))).toHaveProperty('upload', 0);
  expect(asked.packages).not.toContain('@aws-sdk/client-s3');
  const s3 = await packagesLoadedBy(['--version'], {
    INSIGHT_TEST_COUNTS: join(tmp.dir, 'counts-s3.json'),
    S3_ENDPOINT: 'http://127.0.0.1:9',
  });
  expect(JSON.parse(await readFile(join(tmp.dir, 'counts-s3.json'), 'utf8'))).toHaveProperty('upload', 0);
  expect(s3.packages).toContain('@aws-sdk/client-s3');
});
