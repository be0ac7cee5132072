/**
 * `insight-export sandbox --rpc URL` (the real CLI, src/cli.ts): prints its URLs, serves the node's
 * chain, follows a block mined after it started, exits 0 on SIGTERM; a bad --rpc is bad input
 * (exit 2) and an unreachable node a typed failure (exit 1) naming the URL.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli.js';
import { freePort } from '../helpers/free-port.js';
import { useAnvil } from './helpers/anvil.js';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const anvil = useAnvil();

function run(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exit, out: () => stdout, err: () => stderr };
}

async function blockType(url: string, n: number): Promise<unknown[]> {
  const body = (await (await fetch(`${url}/resolve/${n}`)).json()) as { data: { blocks: unknown[] } };
  return body.data.blocks;
}

describe('insight-export sandbox --rpc', () => {
  it('prints its URLs, serves the chain, follows new blocks, and exits 0 on SIGTERM', async () => {
    await anvil.mine();
    const p = run(['--rpc', anvil.url, '--port', '0', '--poll-ms', '50']);
    const url = await new Promise<string>((resolve, reject) => {
      const t = setInterval(() => {
        const m = /^url=(\S+)$/m.exec(p.out());
        // Wait for the summary line too: it is the last line printed at start.
        if (m && /^# chain /m.test(p.out())) {
          clearInterval(t);
          resolve(m[1]!);
        }
      }, 20);
      void p.exit.then((code) => {
        clearInterval(t);
        reject(new Error(`exited ${code}: ${p.err()}`));
      });
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/insights\/v1$/);
    expect(p.out()).toMatch(/^# chain 31337 from http:\/\/127\.0\.0\.1:\d+: blocks 0\.\.1,/m);
    expect(await blockType(url, 1)).toHaveLength(1);
    const next = await anvil.mine();
    const until = Date.now() + 10_000;
    while ((await blockType(url, next)).length === 0) {
      if (Date.now() > until) throw new Error(`block ${next} not served within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  async function inProcess(args: string[]): Promise<{ code: number; stderr: string }> {
    let stderr = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    });
    try {
      return { code: await main(['sandbox', ...args]), stderr };
    } finally {
      spy.mockRestore();
    }
  }

  it('a --rpc that is not an http URL is bad input (exit 2)', async () => {
    const r = await inProcess(['--rpc', 'localhost:8545', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--rpc "localhost:8545" is not an http\(s\) URL/);
  });

  it('an unreachable node is a typed failure naming the URL (exit 1)', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const r = await inProcess(['--rpc', url, '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`JSON-RPC eth_chainId failed at ${url}`);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
