import { startSandbox, type Sandbox, type SandboxOptions } from '@insight-export/sandbox';
import { useForFile } from './use-for-file.js';

/**
 * Starts a sandbox for the calling test file (beforeAll) and closes it afterwards (afterAll).
 * Returns a handle that forwards to the running sandbox: use it inside tests/hooks, e.g.
 *   const sandbox = useSandbox({ transactions: 5_000 });
 *   it('...', async () => { await fetch(`${sandbox.url}/resolve/1`) });
 */
export function useSandbox(opts: SandboxOptions = {}): Sandbox {
  return useForFile(
    'useSandbox(): sandbox',
    () => startSandbox(opts),
    (sandbox) => sandbox.close(),
  );
}

/** GET a sandbox URL and parse the JSON body (any status). */
export async function getJson(url: string): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
}
