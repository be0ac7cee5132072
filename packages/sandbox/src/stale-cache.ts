/**
 * A CDN in front of the service keyed by the full request URL: it keeps the first body each URL
 * got, and after a reorganisation of the data some of its edges still serve that body (drawn per
 * request at the `staleCache` rate, src/sandbox/inconsistencies.ts). It holds at most
 * STALE_CACHE_CHARS characters of JSON, the oldest entries going first.
 */
import type { SandboxDataset } from './data.js';

/** A body serialised once, sent as it is (Replies writes its text). */
export class SerialisedBody {
  constructor(readonly text: string) {}
}

export const STALE_CACHE_CHARS = 64 * 1024 * 1024;

interface Entry {
  body: SerialisedBody;
  /** The data's reorganisations when the body was cached. */
  generation: number;
}

/**
 * How many reorganisations the data has had: branches of the seeded chains (`reorganise`, the
 * reorg route), blocks a node replaced (the data of `sandbox --rpc`).
 */
export function reorgGeneration(data: unknown): number {
  const seeded = data as Partial<SandboxDataset> & { chains?: { chainId: number; reorgedBlocks?: number }[] };
  let n = 0;
  for (const c of seeded.chains ?? []) {
    n += typeof seeded.chainState === 'function' ? (seeded.chainState(c.chainId)?.branches.length ?? 0) : (c.reorgedBlocks ?? 0);
  }
  return n;
}

export class StaleCache {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;

  constructor(private readonly generation: () => number) {}

  /** The body `key` got before the latest reorganisation, if the cache holds one. */
  stale(key: string): SerialisedBody | null {
    const e = this.entries.get(key);
    return e && e.generation < this.generation() ? e.body : null;
  }

  /** Keeps `text` as the body of `key` unless the cache holds one already. */
  keep(key: string, text: string): void {
    if (this.entries.has(key) || text.length > STALE_CACHE_CHARS) return;
    this.entries.set(key, { body: new SerialisedBody(text), generation: this.generation() });
    this.chars += text.length;
    for (const [k, e] of this.entries) {
      if (this.chars <= STALE_CACHE_CHARS) break;
      this.entries.delete(k);
      this.chars -= e.body.text.length;
    }
  }
}
