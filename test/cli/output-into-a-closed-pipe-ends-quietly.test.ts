/**
 * Issue 14.9: `insight-export nfts alice.eth --json | head -2` — the reader closes the pipe after
 * two lines; the CLI stops quietly with exit 0 instead of crashing on EPIPE with a stack trace.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const TSX = join(REPO, 'node_modules/.bin/tsx');

it('nfts --json piped into a reader that stops after two lines', async () => {
  const child = spawn(
    TSX,
    [join(REPO, 'src/cli.ts'), 'nfts', 'alice.eth', '--base-url', 'sandbox', '--chain', '1', '--json', '--log-level', 'silent'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let seen = '';
  child.stdout.on('data', (d: Buffer) => {
    seen += d.toString();
    // Like `head -2`: read two lines, then close the pipe.
    if (seen.split('\n').length > 2) child.stdout.destroy();
  });
  const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
  expect(seen.split('\n').length).toBeGreaterThan(2);
  expect(stderr).not.toMatch(/EPIPE|Unhandled|internal error/);
  expect(code).toBe(0);
}, 120_000);
