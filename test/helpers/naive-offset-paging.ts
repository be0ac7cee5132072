import { getJson } from './sandbox.js';

/** Rows of a list route and how they compare with the true row set, by `chain_id:hash` (or log) id. */
export interface PagingOutcome {
  rows: any[];
  /** True rows never received. */
  lost: number;
  /** Rows received more than once (counting every extra copy). */
  duplicated: number;
}

export function rowId(r: any): string {
  return r.log_index === undefined ? `${r.chain_id}:${r.hash}` : `${r.chain_id}:${r.transaction_hash}:${r.log_index}`;
}

export function compareWithTruth(rows: any[], truth: any[]): PagingOutcome {
  const got = new Set(rows.map(rowId));
  const want = new Set(truth.map(rowId));
  return { rows, lost: [...want].filter((id) => !got.has(id)).length, duplicated: rows.length - got.size };
}

/**
 * The naive client: page = 0, 1, 2, ... with the same query until a page holds fewer rows than
 * `limit` (a missing or null `data` counts as empty), as today's offset paging does.
 */
export async function pageByOffset(url: (page: number) => string, limit: number, maxPages = 1000): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 0; page < maxPages; page++) {
    const { status, body } = await getJson(url(page));
    if (status !== 200) throw new Error(`page ${page}: HTTP ${status} ${JSON.stringify(body)}`);
    const data: any[] = body.data ?? [];
    rows.push(...data);
    if (data.length < limit) return rows;
  }
  throw new Error(`no short page within ${maxPages} pages`);
}
