/**
 * A store that dies at a chosen write, as a process killed there would: it performs its first
 * `budget` writes and throws Crash at the next one, before or after performing it; every write
 * after that throws too. Reads go through. `kinds` records what each write was (see kindOf), for
 * trials of each kind of write.
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
  return {
    get writes() {
      return writes;
    },
    kinds,
    location: inner.location,
    put: (k: string, b: Buffer | string, o?: PutOptions) => write(kindOf('put', k), () => inner.put(k, b, o)),
    putFile: (k: string, p: string, o?: PutOptions) => write(kindOf('put', k), () => inner.putFile(k, p, o)),
    delete: (k: string) => write(kindOf('delete', k), () => inner.delete(k)),
    deleteMany: (ks: string[]) => write(kindOf('delete', ks[0] ?? ''), () => inner.deleteMany(ks)),
    get: (k: string) => inner.get(k),
    getStream: (k: string) => inner.getStream(k),
    head: (k: string) => inner.head(k),
    list: (p: string, o) => inner.list(p, o),
  };
}
