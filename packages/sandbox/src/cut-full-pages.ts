import { hash3, unit } from './prng.js';

/**
 * A broken proxy or CDN in front of the service that drops the last row of a full page: each
 * chain whose rows fill the page's `limit` comes back with `limit - 1` rows, which a client
 * cannot tell from a short page (the end of its slice). Drawn per request from its key at `rate`.
 * Pages of `limit` 1 are spared: emptied, they would make a client's probes for one row (is the
 * chain served, where is its head) fail before any window is exported, which hides the loss this
 * reproduces. Returns the body to send (the same object when the request is spared or holds no
 * full page).
 */
function cutFullPages(body: unknown, limit: number, rate: number, requestKey: number): unknown {
  if (!(rate > 0) || !(limit > 1) || unit(hash3(requestKey, 0xc7, 1)) >= rate) return body;
  const o = body as { data?: unknown };
  if (!Array.isArray(o.data)) return body;
  const rows = o.data as { chain_id?: unknown }[];
  const perChain = new Map<string, number>();
  for (const r of rows) perChain.set(String(r.chain_id), (perChain.get(String(r.chain_id)) ?? 0) + 1);
  const full = new Set([...perChain].filter(([, n]) => n >= limit).map(([chain]) => chain));
  if (full.size === 0) return body;
  const last = new Map<string, number>();
  rows.forEach((r, i) => full.has(String(r.chain_id)) && last.set(String(r.chain_id), i));
  const dropped = new Set(last.values());
  return { ...o, data: rows.filter((_, i) => !dropped.has(i)) };
}

/**
 * The proxy in front of a server: passes list answers of the row routes on through
 * cutFullPages at the rate `rate()` gives (each drawn from `seed` and a count of the answers it
 * passed while the rate was above 0).
 */
export function fullPageCutter(rate: () => number, seed: number): (route: string, url: URL, body: unknown) => unknown {
  let answers = 0;
  return (route, url, body) => {
    const r = rate();
    if (!(r > 0) || (route !== 'transactions' && route !== 'events')) return body;
    return cutFullPages(body, Number(url.searchParams.get('limit')), r, hash3(seed, ++answers, 0xc7));
  };
}
