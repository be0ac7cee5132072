/**
 * A store that dies like a killed process: it performs its first `budget` writes and throws
 * `Crash` at the next one, before or (`after`) once it is done, and at every write after that.
 * Reads go through. A deleteMany is its deletes one by one, each a write, so a crash can fall
 * between two of them. `kinds` records what each write was (see kindOf), for trials of each kind.
 *
 *   const store = crashingStore(inner, 3, false);  // three writes land, the fourth never does
 *   await expect(work(store)).rejects.toThrow(Crash);
 *   crashingStore(inner, Number.MAX_SAFE_INTEGER, false).writes  // counts a whole job's writes
 */
import type { ObjectStore, PutOptions } from '../../src/store/store.js';

export class Crash extends Error {}

/** What a write is: `put` or `delete` and the kind of object (a state folder, a table's metadata file, a data file). */
export function kindOf(op: 'put' | 'delete', key: string): string {
  const state = /^_state\/[^/]+\/([^/]+)\//.exec(key);
  if (state) return `${op} ${state[1]}`;
  if (key.endsWith('/version-hint.text')) return `${op} hint`;
  if (key.endsWith('.metadata.json')) return `${op} metadata`;
  if (key.endsWith('.avro')) return `${op} ${/\/snap-[^/]+$/.test(key) ? 'manifest list' : 'manifest'}`;
  if (key.includes('/metadata/')) return `${op} ${key.endsWith('windows.ndjson.gz') ? 'windows file' : 'table file'}`;
  return `${op} data`;
}

export function crashingStore(
  inner: ObjectStore,
  budget: number,
  after: boolean,
): ObjectStore & { readonly writes: number; readonly kinds: readonly string[] } {
  let writes = 0;
  const kinds: string[] = [];
  const write = async <T>(kind: string, fn: () => Promise<T>): Promise<T> => {
    if (writes > budget) throw new Crash('dead');
    writes++;
    kinds.push(kind);
    if (writes === budget + 1) {
      if (after) await fn();
      throw new Crash('crash');
    }
    return fn();
  };
  const del = (k: string) => write(kindOf('delete', k), () => inner.delete(k));
  return {
    get writes() {
      return writes;
    },
    kinds,
    location: inner.location,
    put: (k: string, b: Buffer | string, o?: PutOptions) => write(kindOf('put', k), () => inner.put(k, b, o)),
    putFile: (k: string, p: string, o?: PutOptions) => write(kindOf('put', k), () => inner.putFile(k, p, o)),
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
