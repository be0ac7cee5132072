/**
 * What a table's snapshot must hold right after a run was killed in its commit (the file-commit
 * and the catalog SIGKILL trials): whole windows only. Rows are the sorted canonical rows of
 * test/helpers/iceberg.ts (`[field, value]` pairs); a window is a UTC day of a chain (the jobs of
 * these trials have one target per table).
 */
import { expect } from 'vitest';
import { duplicates } from '../reliability/harness.js';

/** A row's window: its chain and UTC day (block_time in microseconds). */
export function windowOf(row: string): string {
  const r = Object.fromEntries(JSON.parse(row) as [string, string][]);
  return `chain ${r.chain_id} day ${Math.floor(Number(r.block_time) / 86_400_000_000)}`;
}

/**
 * The rows of a table's snapshot are whole windows: each window's rows all there or none, nothing
 * no window has (`all`: a fresh export's rows up to the killed run's end), none twice, and every row
 * the first run committed (`first`: the killed run's commit appends or overwrites windows; it never
 * takes the table back).
 */
export function expectWholeWindows(rows: string[], truth: { all: string[]; first: string[] }, label: string): void {
  const have = new Set(rows);
  const known = new Set(truth.all);
  expect(duplicates(rows), `${label}: rows twice`).toEqual([]);
  expect(
    rows.filter((r) => !known.has(r)),
    `${label}: rows no window has`,
  ).toEqual([]);
  expect(
    truth.first.filter((r) => !have.has(r)),
    `${label}: rows of the first run lost`,
  ).toEqual([]);
  const windows = new Map<string, string[]>();
  for (const r of truth.all) windows.set(windowOf(r), [...(windows.get(windowOf(r)) ?? []), r]);
  const partial = [...windows].filter(([, w]) => w.some((r) => have.has(r)) && !w.every((r) => have.has(r))).map(([w]) => w);
  expect(partial, `${label}: windows read in part`).toEqual([]);
}
