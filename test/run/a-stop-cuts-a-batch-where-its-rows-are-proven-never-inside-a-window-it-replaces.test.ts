/**
 * Where a stopping run cuts a batch still paging (src/run/stop-cut.ts): at the point its rows are
 * proven to; never inside a completed interval the batch replaces (that commit would drop the
 * interval's rest), then at that interval's start; nothing when a row at or above the cut was
 * written (a one-block slice cut on a finer axis), or nothing is proven. The batch's planned
 * windows then report done below the cut, abandoned from it, and the files go on the last window
 * holding committed rows.
 */
import { describe, expect, it } from 'vitest';
import { cutOutcomes, stopCut } from '../../src/run/stop-cut.js';
import type { WindowOutcome } from '../../src/run/export-windows.js';

describe('stopCut', () => {
  const batch = { start: 100, end: 200, exported: [] };
  it('cuts where the rows are proven, when every row written lies below', () => {
    expect(stopCut({ ...batch, provenTo: 137, lastWritten: 136 })).toBe(137);
    expect(stopCut({ ...batch, provenTo: 137, lastWritten: undefined })).toBe(137);
  });
  it('commits nothing when nothing is proven, or a row at or above the proven point was written', () => {
    expect(stopCut({ ...batch, provenTo: undefined, lastWritten: undefined })).toBeNull();
    expect(stopCut({ ...batch, provenTo: 100, lastWritten: undefined })).toBeNull();
    expect(stopCut({ ...batch, provenTo: 137, lastWritten: 137 })).toBeNull();
  });
  it('a batch proven to its end is committed whole', () => {
    expect(stopCut({ ...batch, provenTo: 200, lastWritten: 199 })).toBe(200);
  });
  it('never cuts inside a completed interval the batch replaces: it cuts at its start, if no row at or above it was written', () => {
    const exported = [
      { start: 100, end: 120 },
      { start: 130, end: 160 },
    ];
    expect(stopCut({ ...batch, exported, provenTo: 137, lastWritten: 125 })).toBe(130);
    expect(stopCut({ ...batch, exported, provenTo: 137, lastWritten: 131 })).toBeNull();
    expect(stopCut({ ...batch, exported, provenTo: 125, lastWritten: 124 })).toBe(125);
    expect(stopCut({ ...batch, exported, provenTo: 110, lastWritten: 105 })).toBeNull();
  });
});

describe('cutOutcomes', () => {
  const windows = [
    { start: 0, end: 10 },
    { start: 10, end: 20 },
    { start: 20, end: 30 },
    { start: 30, end: 40 },
  ];
  const base = { unitKey: 'u', chainId: 1, start: 0, end: 40 };
  const committed: WindowOutcome = {
    ...base,
    status: 'done',
    rows: 9,
    files: 1,
    bytes: 99,
    written: [{ key: 'f', rows: 9, bytes: 99 }],
    duringStop: true,
  };
  const abandoned = (w: { start: number; end: number }): WindowOutcome => ({
    ...base,
    ...w,
    status: 'abandoned',
    rows: 0,
    files: 0,
    bytes: 0,
  });

  it('windows below the cut are done, the one it falls in abandoned with its committed rows and the files, the rest abandoned', () => {
    const out = cutOutcomes(committed, windows, 25, (_, i) => [3, 4, 2, 0][i]!, abandoned);
    expect(out.map((o) => [o.start, o.status, o.rows, o.files])).toEqual([
      [0, 'done', 3, 0],
      [10, 'done', 4, 0],
      [20, 'abandoned', 2, 1],
      [30, 'abandoned', 0, 0],
    ]);
    expect(out[2]).toMatchObject({ committed: [0, 25], written: committed.written, duringStop: true });
    expect(out.reduce((n, o) => n + o.rows, 0)).toBe(committed.rows);
  });
  it('a cut on a window boundary leaves no window in part', () => {
    const out = cutOutcomes(committed, windows, 20, (_, i) => [5, 4, 0, 0][i]!, abandoned);
    expect(out.map((o) => [o.status, o.files])).toEqual([
      ['done', 0],
      ['done', 1],
      ['abandoned', 0],
      ['abandoned', 0],
    ]);
    expect(out[1]).toMatchObject({ committed: [0, 20] });
  });
});
