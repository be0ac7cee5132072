import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/**
 * Starts a sandbox for the calling test file (beforeAll) and closes it afterwards (afterAll).
 * Returns a handle that forwards to the running sandbox: use it inside tests/hooks, e.g.
 *   const sandbox = useSandbox({ transactions: 5_000 });
 *   it('...', async () => { await fetch(`${sandbox.url}/resolve/1`) });
 */
export function useSandbox(opts: SandboxOptions = {}): Sandbox {
  let current: Sandbox | undefined;
  beforeAll(async () => {
    current = await startSandbox(opts);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as Sandbox, {
    get(_target, prop) {
      if (!current) throw new Error(`useSandbox(): sandbox.${String(prop)} used outside the test file's tests (it starts in beforeAll)`);
      const value = (current as unknown as Record<PropertyKey, unknown>)[prop];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
}

/** GET a sandbox URL and parse the JSON body (any status). */
export async function getJson(url: string): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
}
