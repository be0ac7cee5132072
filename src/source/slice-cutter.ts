/**
 * Cutting one axis of a slice into smaller slices of about `target` rows, from what is known of each
 * chain's rows there (a full answer's sample, the chain's density).
 */
import type { Box } from './slice-answers.js';

/** What is known of one chain's rows on one axis of a slice when it is cut. */
export interface Knowledge {
  /** Axis values of the rows a full answer carried inside the slice, ascending. */
  sample: number[];
  /** Rows per axis unit (0: unknown). */
  density: number;
  /** The whole slice came back full for the chain: it is never asked whole again. */
  wasFull: boolean;
  /** Axis values of the chain's distinct rows that full answer held, ascending: a slice's answer must hold as many. */
  shown: number[];
}

/**
 * Cuts [lo, hi) of one axis into slices that one or more chains share, each of about `target`
 * rows for the chain that fills it first: by a chain's sample quantiles while they last, then by
 * its density; the rest in one slice when no density is known or the axis is unbounded. Never
 * returns the whole of a slice that came back full for a chain.
 */
export class Cutter {
  private x: number;
  /** By chain: the index of the first sample value at or after x. */
  private readonly at = new Map<number, number>();
  constructor(
    private readonly lo: number,
    private readonly hi: number,
    private readonly known: Map<number, Knowledge>,
    private readonly target: number,
  ) {
    this.x = lo;
  }

  done(): boolean {
    return this.x >= this.hi;
  }

  /** Gives back a slice that could not be sent: the next one starts at `lo` again. */
  unget(lo: number): void {
    this.x = lo;
    this.at.clear();
  }

  next(): [number, number] {
    const x = this.x;
    let cut = this.hi;
    for (const [chainId, known] of this.known) cut = Math.min(cut, this.cutFor(chainId, known, x));
    this.x = cut;
    return [x, cut];
  }

  /** Where a slice from x would end for one chain alone. */
  private cutFor(chainId: number, known: Knowledge, x: number): number {
    const { sample, density } = known;
    let k = this.at.get(chainId) ?? 0;
    while (k < sample.length && sample[k]! < x) k++;
    this.at.set(chainId, k);
    const bounded = this.hi !== Number.POSITIVE_INFINITY;
    let cut: number;
    if (k < sample.length) {
      const j = k + this.target;
      if (j < sample.length) {
        cut = sample[j]!;
        if (cut <= x) cut = x + 1; // more than `target` rows at x: a slice one value wide
      } else {
        // The sample ends inside this slice: extend it by the density for what is left of the target.
        const left = this.target - (sample.length - k);
        const beyond = density > 0 && bounded ? Math.floor(left / density) : 0;
        cut = sample[sample.length - 1]! + 1 + beyond;
      }
    } else if (density > 0 && bounded) {
      cut = x + Math.max(1, Math.floor(this.target / density));
    } else {
      cut = this.hi;
    }
    cut = Math.min(this.hi, Math.max(x + 1, cut));
    if (known.wasFull && x === this.lo && cut >= this.hi) {
      // The whole slice again would come back full again: halve it (the sample said nothing useful).
      cut = bounded ? x + Math.max(1, Math.floor((this.hi - x) / 2)) : x + 1;
    }
    return cut;
  }
}

export function withAxis(box: Box, axis: number, lo: number, hi: number): Box {
  const b: Box = { lo: [...box.lo], hi: [...box.hi] };
  b.lo[axis] = lo;
  b.hi[axis] = hi;
  return b;
}
