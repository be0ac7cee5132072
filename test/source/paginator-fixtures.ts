/**
 * What the paginator tests page through: rows of a fake list endpoint, windowed on block numbers,
 * positioned by (block, index), and a fake endpoint that answers like the contract or like the
 * real indexer misbehaves (shuffled ties, UNION ALL with a doubled offset, repeated rows, rows
 * outside the slice).
 */
import type { ChainDone, RecordPage, RequestPool, WindowPagerOptions } from '../../src/source/paginator.js';
import { MAX_CHAIN_IDS, type Filters } from '../../src/source/query.js';
import { mulberry32 as prng } from '../helpers/prng.js';

export interface Rec {
  chain: number;
  block: number;
  /** Position in the block (transaction_index / log_index). */
  index: number;
  id: string;
  /** A wallet's self-transfer: its sender half and receiver half are the same row. */
  self?: boolean;
  /** Wallet transactions: the wallet sent it (else it received it). */
  sent?: boolean;
  /** Not the target's (another wallet's), though the fake service serves it as such. */
  foreign?: boolean;
  /** Served among the rows of this chain although its own chain is `chain` (a row of a chain not asked for). */
  servedWith?: number;
}

/** A fake endpoint's answer for chains, filters and page (page is 0 unless an OFFSET pager asks for more). */
export type RecFetch = (chains: number[], filters: Filters, page: number, limit: number) => Promise<Rec[]>;

/**
 * pageWindow options over Rec rows on the block axis (block, then index). The object also carries
 * the options the OFFSET paginator took (lowerFilter, maxPage, ...), so that a test can be run
 * against it to show that it fails.
 */
export function blockWindowOptions(
  fetch: RecFetch,
  o: {
    chainIds: number[];
    start: number;
    end: number;
    limit: number;
    maxPage?: number;
    prefetch: number;
    pool?: RequestPool;
    target?: number;
    density?: Map<number, number>;
  },
): WindowPagerOptions<Rec> {
  const options = {
    chainIds: o.chainIds,
    start: o.start,
    end: o.end,
    axes: [
      { field: 'block_number', value: (r: Rec) => r.block },
      { field: 'transaction_index', value: (r: Rec) => r.index },
    ],
    baseFilters: {},
    limit: o.limit,
    ...(o.target ? { target: o.target } : {}),
    ...(o.density ? { density: o.density } : {}),
    prefetch: o.prefetch,
    chainsPerRequest: () => MAX_CHAIN_IDS,
    ...(o.pool ? { pool: o.pool } : {}),
    // Third argument: pageWindow's HeldBody (ignored: these answers are records already), or the OFFSET pager's page.
    fetch: (chains: number[], filters: Filters, pageOrHeld?: unknown) =>
      fetch(chains, filters, typeof pageOrHeld === 'number' ? pageOrHeld : 0, o.limit),
    chainId: (r: Rec) => r.chain,
    itemId: (r: Rec) => r.id,
    // The OFFSET paginator's options.
    lowerFilter: 'filter_block_number_gte',
    upperFilter: 'filter_block_number_lt',
    maxPage: o.maxPage ?? 20,
    axisValue: (r: Rec) => r.block,
  };
  return options as WindowPagerOptions<Rec>;
}

/** Rows of one chain: `perBlock(b)` rows in block first+b, every `selfEvery`-th a self-transfer. */
export function makeRows(chain: number, blocks: number, perBlock: (b: number) => number, first = 1000, selfEvery = 0): Rec[] {
  const rows: Rec[] = [];
  let n = 0;
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < perBlock(b); i++) {
      const self = selfEvery > 0 && n % selfEvery === selfEvery - 1;
      rows.push({ chain, block: first + b, index: i, id: `${chain}:${first + b}:${i}`, self, sent: n % 2 === 0 });
      n++;
    }
  }
  return rows;
}

export type Misbehaviour = 'shuffle-ties' | 'union' | 'repeat-earlier' | 'outside-slice';

/** repeat-earlier and outside-slice misbehave in one answer of this many. */
const MISBEHAVING = 5;

function inFilters(r: Rec, f: Filters): boolean {
  const bound = (name: string) => (f[name] === undefined ? undefined : Number(f[name]));
  const checks: [number, string][] = [
    [r.block, 'block_number'],
    [r.index, 'transaction_index'],
  ];
  for (const [v, field] of checks) {
    const gte = bound(`filter_${field}_gte`);
    const lt = bound(`filter_${field}_lt`);
    if (gte !== undefined && v < gte) return false;
    if (lt !== undefined && v >= lt) return false;
  }
  return true;
}

/**
 * A fake list endpoint over `rows`: the contract's semantics (filters, sorted by block, `limit`
 * per chain, OFFSET by page), plus the given misbehaviours of the real indexer:
 * - shuffle-ties: rows of one block come in a different order on every request;
 * - union: wallet transactions as UNION ALL of the sent and received rows, each sorted by block
 *   with unstable ties and cut at 2*limit from page*limit, joined without order and cut again at
 *   limit from page*limit (the offset applied twice; a self-transfer comes twice);
 * - repeat-earlier: rows of earlier blocks of the chain (outside the filters) come again, in one
 *   answer of MISBEHAVING (a service that always did would never prove a slice: see
 *   test/source/an-answer-proves-only-the-slice-it-answers.test.ts);
 * - outside-slice: rows just outside the filters are mixed in, in one answer of MISBEHAVING.
 * Rows `foreign` or `servedWith` another chain are served as if they matched (before the limit
 * cuts the answer), and counted in `intruders`.
 */
export function fakeService(all: Rec[], misbehave: Misbehaviour[] = [], seed = 7) {
  const random = prng(seed);
  const requests: { chains: number[]; filters: Filters; page: number }[] = [];
  const intruders = { foreign: 0, otherChain: 0 };
  const has = (m: Misbehaviour) => misbehave.includes(m);
  const shuffle = <T>(xs: T[]): T[] => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  /** Sorted by block; ties in an order that changes with every request when shuffle-ties is on. */
  const byBlock = (xs: Rec[]): Rec[] => {
    const keyed = xs.map((r) => ({ r, tie: has('shuffle-ties') || has('union') ? random() : r.index }));
    keyed.sort((a, b) => a.r.block - b.r.block || a.tie - b.tie);
    return keyed.map((k) => k.r);
  };
  const fetch: RecFetch = async (chains, filters, page, limit) => {
    requests.push({ chains, filters, page });
    await new Promise((r) => setImmediate(r));
    const out: Rec[] = [];
    // One draw per answer (one response, whatever its chains) decides whether it carries rows outside its slice (either way, or both).
    const strays = (has('repeat-earlier') || has('outside-slice')) && random() < 1 / MISBEHAVING;
    for (const chain of chains) {
      const mine = all.filter((r) => (r.servedWith ?? r.chain) === chain);
      const matching = mine.filter((r) => inFilters(r, filters));
      let answer: Rec[];
      if (has('union')) {
        const sent = byBlock(matching.filter((r) => r.sent || r.self)).slice(page * limit, page * limit + 2 * limit);
        const received = byBlock(matching.filter((r) => !r.sent || r.self)).slice(page * limit, page * limit + 2 * limit);
        const joined = random() < 0.5 ? [...sent, ...received] : shuffle([...sent, ...received]);
        answer = joined.slice(page * limit, (page + 1) * limit);
      } else {
        answer = byBlock(matching).slice(page * limit, (page + 1) * limit);
      }
      if (has('repeat-earlier') && strays) {
        const earlier = mine.filter((r) => r.block < Number(filters.filter_block_number_gte ?? 0));
        const extra = earlier.length > 0 ? [earlier[Math.floor(random() * earlier.length)]!] : [];
        if (answer.length > 0) extra.push(answer[Math.floor(random() * answer.length)]!);
        answer = [...answer.slice(0, Math.max(0, limit - extra.length)), ...extra];
      }
      if (has('outside-slice') && strays) {
        const outside = mine.filter((r) => !inFilters(r, filters));
        const extra = outside.length > 0 ? [outside[Math.floor(random() * outside.length)]!] : [];
        answer = [...answer.slice(0, Math.max(0, limit - extra.length)), ...extra];
      }
      for (const r of answer) {
        if (r.servedWith !== undefined) intruders.otherChain++;
        else if (r.foreign) intruders.foreign++;
      }
      out.push(...answer);
    }
    return out;
  };
  return { requests, fetch, intruders };
}

/** The rows a window yields, in the order yielded, and the chains it said were done. */
export async function collect(gen: AsyncGenerator<RecordPage<Rec> | ChainDone>): Promise<{ rows: Rec[]; done: number[] }> {
  const rows: Rec[] = [];
  const done: number[] = [];
  for await (const b of gen) {
    if ('done' in b) done.push(b.chainId);
    else rows.push(...b.records);
  }
  return { rows, done };
}
