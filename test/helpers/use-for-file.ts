import { afterAll, beforeAll } from 'vitest';

/**
 * Opens a resource for the calling test file (beforeAll) and closes it afterwards (afterAll).
 * Returns a handle that forwards to the open resource, its methods bound to it: use it inside
 * tests and hooks, not at the top level of the file. `name` (e.g. 'useSandbox(): sandbox') names
 * the handle in the error thrown for a use outside them.
 */
export function useForFile<T extends object>(name: string, open: () => Promise<T>, close: (resource: T) => Promise<unknown>): T {
  let current: T | undefined;
  beforeAll(async () => {
    current = await open();
  });
  afterAll(async () => {
    if (current) await close(current);
    current = undefined;
  });
  return new Proxy({} as T, {
    get(_target, prop) {
      if (!current) throw new Error(`${name}.${String(prop)} used outside the test file's tests (it is opened in beforeAll)`);
      const value = (current as unknown as Record<PropertyKey, unknown>)[prop];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
}
