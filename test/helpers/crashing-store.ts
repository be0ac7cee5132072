/**
 * A store that dies like a killed process: it performs its first `budget` writes and throws
 * `Crash` at the next one, before or (`after`) once it is done, and at every write after that.
 * A deleteMany is its deletes one by one, each a write, so a crash can fall between two of them.
 *
 *   const store = crashingStore(inner, 3, false);  // three writes land, the fourth never does
 *   await expect(work(store)).rejects.toThrow(Crash);
 *   crashingStore(inner, Number.MAX_SAFE_INTEGER, false).writes  // counts a whole job's writes
 */
import type { ObjectStore, PutOptions } from '../../src/store/store.js';

export class Crash extends Error {}

export function crashingStore(inner: ObjectStore, budget: number, after: boolean): ObjectStore & { readonly writes: number } {
  let writes = 0;
  const write = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (writes > budget) throw new Crash('dead');
    writes++;
    if (writes === budget + 1) {
      if (after) await fn();
      throw new Crash('crash');
    }
    return fn();
  };
  const del = (k: string) => write(() => inner.delete(k));
  return {
    get writes() {
      return writes;
    },
    location: inner.location,
    put: (k: string, b: Buffer | string, o?: PutOptions) => write(() => inner.put(k, b, o)),
    putFile: (k: string, p: string, o?: PutOptions) => write(() => inner.putFile(k, p, o)),
    delete: del,
    deleteMany: async (ks: string[]) => {
      for (const k of ks) await del(k);
    },
    get: (k: string) => inner.get(k),
    getStream: (k: string) => inner.getStream(k),
    head: (k: string) => inner.head(k),
    list: (p: string, o) => inner.list(p, o),
  };
}
