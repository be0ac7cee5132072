import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { prepareAction } from '../../scripts/prepare.js';
import { oncePerRun } from './once-per-run.js';

const REPO = resolve(import.meta.dirname, '../..');

/**
 * `npm run build` exactly as the image's build stage runs it (tsconfig.build.json: JavaScript and
 * declarations), shared by the test files that package it (copy it: it is read-only to them). The
 * repository's dist/ when `prepare` would leave it as it is (built after every source it is built
 * from: on a clean clone `npm ci`'s prepare has just built it, ~25 CPU-s not spent twice); else a
 * dist folder built once per test run, its output in the error when it fails.
 */
export function builtDist(): Promise<string> {
  const dist = join(REPO, 'dist');
  if (prepareAction(REPO) === 'fresh' && existsSync(join(dist, 'bin/cli.js'))) return Promise.resolve(dist);
  return oncePerRun('dist', (outDir) => npmRunBuild(outDir));
}

function npmRunBuild(outDir: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn('npm', ['run', 'build', '--', '--outDir', outDir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done() : fail(new Error(`npm run build exited ${code}:\n${output}`))));
  });
}
