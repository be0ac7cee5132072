import fs from 'node:fs';
import { vi } from 'vitest';
import { main } from '../../src/cli.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InProcessOptions {
  /**
   * Also capture the log lines into `stderr`, as a child run's stderr holds them: the logger writes
   * to file descriptor 2 itself (pino's synchronous destination, fs.writeSync), not through
   * process.stderr. Off by default: the lines then reach the test runner's stderr as before.
   */
  logs?: boolean;
}

const text = (chunk: unknown): string => (typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));

/** Runs the CLI in-process (as `insight-export <argv>`), capturing what it writes. */
export async function runCli(argv: string[], opts: InProcessOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += text(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += text(chunk);
    return true;
  });
  const writeSync = fs.writeSync.bind(fs);
  const logs = opts.logs
    ? vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) => {
        if (fd !== 2) return (writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
        const s = text(data);
        stderr += s;
        return Buffer.byteLength(s);
      }) as typeof fs.writeSync)
    : undefined;
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    logs?.mockRestore();
  }
}
