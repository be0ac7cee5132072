import { startSandbox, type Sandbox, type SandboxOptions } from '@insight-export/sandbox';
import { rowId } from './naive-offset-paging.js';

/** Runs `fn` against a sandbox of 6,000 transactions (seed 21) with the knobs in `opts`, then closes it. */
export async function withSandbox<T>(opts: SandboxOptions, fn: (s: Sandbox) => Promise<T>): Promise<T> {
  const s = await startSandbox({ transactions: 6_000, seed: 21, ...opts });
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** The rows' ids, in their order. */
export const ids = (rows: any[]) => rows.map(rowId);
