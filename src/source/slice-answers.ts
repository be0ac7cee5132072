/**
 * One answer read against the slice it was asked for (src/source/paginator.ts): each requested
 * chain's part of it, and what makes it no proof of the slice (src/source/bad-answers.ts).
 */
import { countIn, type BadAnswer } from './bad-answers.js';
import type { RejectReason, SliceAxis } from './paginator.js';

/** A box over the axes: [lo[i], hi[i]) on axis i; hi may be Infinity (unbounded above). */
export interface Box {
  lo: number[];
  hi: number[];
}

/** What one request asked for. */
export interface SliceAsked {
  box: Box;
  chains: number[];
  /** 1 for the first request of the box; more when earlier answers proved nothing. */
  attempt: number;
  /** The limit sent: an answer with fewer rows for a chain proves the box for it. */
  limit: number;
}

/** One requested chain's part of an answer. */
export interface ChainAnswer<Rec> {
  /** Rows the service sent that count against this chain's limit (dropped ones included). */
  sent: number;
  /** Its rows inside the slice (the target's or not): what a full answer is cut by. */
  inside: Rec[];
  /** Those of the target: what a short answer yields. */
  taken: Rec[];
  /** The first row that makes the answer no proof (see bad-answers.ts). */
  bad: { reason: 'outside_slice' | 'implausible' | 'block_hash'; row: Rec } | null;
}

/** How the rows of a window's answers are told apart. */
export interface AnswerRules<Rec> {
  axes: readonly SliceAxis<Rec>[];
  chainId(rec: Rec): number;
  itemId(rec: Rec): string;
  /** Why a row of a requested chain inside its slice is not the target's, or null when it is. */
  reject?(rec: Rec): RejectReason | null;
  /** Why a row of a requested chain cannot be in any answer of the window, or null. */
  check?(rec: Rec): 'implausible' | 'block_hash' | null;
}

/**
 * Rows a chain's density must expect in a slice for an empty answer to be asked once more: for
 * rows as frequent as the density says, no row at all in that many is beyond chance (e^-20).
 */
const UNEXPECTED_ROWS = 20;

/**
 * An answer by requested chain, its rows checked against the request (chain, slice, target, the
 * window's check); `rejected` counts each row not taken. The service's limit applies per chain,
 * and a row of a chain not asked for may have taken any asked chain's place: it counts against
 * each of them, so that no chain's answer looks short while the service cut it (at worst a short
 * one is split once more).
 */
export function readAnswer<Rec>(
  asked: SliceAsked,
  rows: Rec[],
  rules: AnswerRules<Rec>,
  rejected: (chainId: number, reason: RejectReason, row: Rec) => void,
): Map<number, ChainAnswer<Rec>> {
  const out = new Map<number, ChainAnswer<Rec>>(asked.chains.map((c) => [c, { sent: 0, inside: [], taken: [], bad: null }]));
  let stray = 0;
  for (const r of rows) {
    const part = out.get(rules.chainId(r));
    if (!part) {
      stray++;
      rejected(asked.chains[0]!, 'other_chain', r);
      continue;
    }
    part.sent++;
    const wrong = rules.check?.(r) ?? null;
    if (wrong !== null) part.bad ??= { reason: wrong, row: r };
    if (!isInside(asked.box, r, rules.axes)) {
      part.bad ??= { reason: 'outside_slice', row: r };
      rejected(rules.chainId(r), 'outside_slice', r);
      continue;
    }
    part.inside.push(r);
    const reason = rules.reject?.(r) ?? null;
    if (reason === null) part.taken.push(r);
    else rejected(rules.chainId(r), reason, r);
  }
  for (const part of out.values()) part.sent += stray;
  return out;
}

function isInside<Rec>(box: Box, r: Rec, axes: readonly SliceAxis<Rec>[]): boolean {
  for (let i = 0; i < axes.length; i++) {
    const v = axes[i]!.value(r);
    if (!(v >= box.lo[i]! && v < box.hi[i]!)) return false;
  }
  return true;
}

/** Exactly `limit - 1` rows for a chain where the box can still be cut: what a proxy dropping a full page's last row sends. */
export function cutPage(asked: SliceAsked, answer: ChainAnswer<unknown>): boolean {
  return answer.sent === asked.limit - 1 && asked.limit > 2 && asked.box.lo.some((lo, i) => asked.box.hi[i]! - lo > 1);
}

/** What is known of a chain's rows where the box was cut from a wider answer. */
export interface AnswerExpectations {
  /** Rows per unit of `axis` (0: unknown). */
  density(chainId: number): number;
  /** Axis values of the chain's distinct rows the wider answer showed, ascending (none: no wider answer). */
  shown(chainId: number): readonly number[] | undefined;
  /** The axis the box was cut on. */
  axis: number;
  /** The box of a full answer (not a proof whatever it holds). */
  full(chainId: number, answer: ChainAnswer<unknown>): boolean;
  /** The box and chain, for messages. */
  where(chainId: number): string;
}

/**
 * Why an answer proves nothing (see bad-answers.ts), or null: a row it should not hold, fewer
 * distinct rows of a chain than the wider answer the box was cut from showed in it, or, on a first
 * attempt, no row at all where the chain's density expects UNEXPECTED_ROWS or more (asked once
 * more: an answer with rows wins, a second empty one is taken).
 */
export function answerProblem<Rec>(
  asked: SliceAsked,
  answers: Map<number, ChainAnswer<Rec>>,
  rules: AnswerRules<Rec>,
  x: AnswerExpectations,
): BadAnswer | null {
  const { axis } = x;
  const width = asked.box.hi[axis]! - asked.box.lo[axis]!;
  for (const [chainId, a] of answers) {
    if (a.bad) {
      const at = rules.axes.map((ax) => `${ax.field}=${ax.value(a.bad!.row)}`).join(', ');
      return {
        reason: a.bad.reason,
        what: `a row at ${at} (${a.bad.reason}) for ${x.where(chainId)}`,
        chainIds: asked.chains,
        row: a.bad.row,
      };
    }
    const expected = x.density(chainId) * width;
    if (a.sent === 0 && asked.attempt === 1 && expected >= UNEXPECTED_ROWS) {
      const what = `no row for ${x.where(chainId)} where its density expects ${Math.round(expected)}`;
      return { reason: 'unexpectedly_empty', what, chainIds: asked.chains };
    }
    const shown = x.shown(chainId);
    if (!shown?.length || x.full(chainId, a)) continue;
    const need = countIn(shown, asked.box.lo[axis]!, asked.box.hi[axis]!);
    const got = new Set(a.taken.map((r) => rules.itemId(r))).size;
    if (got < need)
      return {
        reason: 'fewer_than_known',
        what: `${got} rows for ${x.where(chainId)} where an answer showed ${need}`,
        chainIds: asked.chains,
      };
  }
  return null;
}
