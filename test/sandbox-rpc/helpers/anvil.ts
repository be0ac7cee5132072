/**
 * A real EVM node for tests: anvil from npm (@foundry-rs/anvil ships the binary in a platform
 * package), on a random loopback port, with automine off by default so a test decides what goes
 * into each block (measured: automine with many parallel senders stalls,
 * and a block over the gas limit silently drops transactions, hence --gas-limit 300M; and see
 * --order fifo below).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { useForFile } from '../../helpers/use-for-file.js';

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

export function anvilBinary(): string {
  const pkg = `@foundry-rs/anvil-${process.platform === 'win32' ? 'win32' : process.platform}-${ARCH[process.arch] ?? process.arch}`;
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

export interface Anvil {
  url: string;
  port: number;
  process: ChildProcess;
  /** A raw JSON-RPC call (plain fetch, independent of the code under test); throws on an error answer. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Mines one block with the pending transactions; returns its number. */
  mine(): Promise<number>;
  close(): Promise<void>;
}

export interface AnvilOptions {
  /** Automatic mining of each transaction (default false: blocks only on mine()). */
  automine?: boolean;
  args?: string[];
}

export async function startAnvil(opts: AnvilOptions = {}): Promise<Anvil> {
  // --order fifo: with the default fee ordering, a sender's transaction paying more than its
  // lower-nonce predecessors in the same block was silently dropped (measured with anvil 1.7.1).
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--gas-limit',
    '300000000',
    '--order',
    'fifo',
    ...(opts.automine ? [] : ['--no-mining']),
    ...(opts.args ?? []),
  ];
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`anvil did not start in 15 s:\n${output}`)), 15_000);
    const onData = (d: Buffer) => {
      if (output.length < 20_000) output += d.toString();
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with ${code}:\n${output}`));
    });
  });
  // Keep draining the request log so the pipe never fills.
  child.stdout!.resume();
  child.stderr!.resume();
  if (process.env.ANVIL_LOG) child.stdout!.on('data', (d: Buffer) => process.stderr.write(d));
  const url = `http://127.0.0.1:${port}`;
  let id = 0;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
    return body.result as T;
  };
  return {
    url,
    port,
    process: child,
    rpc,
    async mine() {
      await rpc('evm_mine');
      return Number(await rpc<string>('eth_blockNumber'));
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Starts anvil for the calling test file (beforeAll) and stops it afterwards; the handle forwards to it. */
export function useAnvil(opts: AnvilOptions = {}): Anvil {
  return useForFile(
    'useAnvil(): anvil',
    () => startAnvil(opts),
    (anvil) => anvil.close(),
  );
}
