import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { oncePerRun } from './once-per-run.js';

const REPO = resolve(import.meta.dirname, '../..');

/**
 * `npm run build` exactly as the image's build stage runs it (tsconfig.build.json: JavaScript and
 * declarations), into a dist folder built once per test run and shared by the test files that
 * package it (copy it: it is read-only to them). Its output is in the error when it fails.
 */
export function builtDist(): Promise<string> {
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
