/**
 * Answers that are well-formed pages but wrong for the request (src/sandbox/inconsistencies.ts
 * draws which): no rows for a slice that has some, block times in milliseconds, the rows of the
 * neighbouring slice.
 */

/** True when the body is a list answer carrying rows. */
export function hasRows(body: unknown): boolean {
  return rowsOf(body) !== null;
}

/** A list answer's rows, when it carries some. */
function rowsOf(body: unknown): Record<string, unknown>[] | null {
  const data = (body as { data?: unknown } | null)?.data;
  return Array.isArray(data) && data.length > 0 ? (data as Record<string, unknown>[]) : null;
}

/** The answer without its rows (`data: []`, no items), as an index with a shard missing gives; null when it had no rows. */
export function emptyAnswer(body: unknown): unknown {
  if (!rowsOf(body)) return null;
  const o = body as { meta?: Record<string, unknown> };
  const meta = o.meta && 'total_items' in o.meta ? { ...o.meta, total_items: 0 } : o.meta;
  return { ...o, meta, data: [] };
}

/** The answer with each row's block_timestamp in milliseconds; null when it had no rows. */
export function millisecondTimestamps(body: unknown): unknown {
  const rows = rowsOf(body);
  if (!rows) return null;
  const ms = (t: unknown) => (typeof t === 'number' ? t * 1000 : typeof t === 'string' && /^\d+$/.test(t) ? String(Number(t) * 1000) : t);
  return { ...(body as object), data: rows.map((r) => ({ ...r, block_timestamp: ms(r.block_timestamp) })) };
}

const BOUND = /^filter_(block_number|block_timestamp)_(gte|gt|lte|lt)$/;

/**
 * The URL of the same-width slice just below (`above` false) or just above the one `url` asks
 * for, on block_number if the request bounds it on both sides, else block_timestamp; null when
 * it bounds neither on both sides (or a row query asks for aggregates).
 */
export function neighbourSliceUrl(url: URL, above: boolean): URL | null {
  const q = url.searchParams;
  if (q.getAll('group_by').some((g) => g.trim() !== '') || q.getAll('aggregate').some((a) => a.trim() !== '')) return null;
  for (const column of ['block_number', 'block_timestamp']) {
    let lo: number | null = null;
    let hi: number | null = null;
    for (const [key, raw] of q) {
      const m = BOUND.exec(key);
      if (!m || m[1] !== column || !/^\d+$/.test(raw)) continue;
      const v = Number(raw);
      if (m[2] === 'gte' || m[2] === 'gt') lo = Math.max(lo ?? 0, m[2] === 'gt' ? v + 1 : v);
      else hi = Math.min(hi ?? Number.POSITIVE_INFINITY, m[2] === 'lte' ? v + 1 : v);
    }
    if (lo === null || hi === null || !(hi > lo)) continue;
    const shift = above || lo < hi - lo ? hi - lo : lo - hi;
    const out = new URL(url);
    for (const [key, raw] of q) {
      const m = BOUND.exec(key);
      if (m && m[1] === column && /^\d+$/.test(raw)) out.searchParams.set(key, String(Number(raw) + shift));
    }
    return out;
  }
  return null;
}
