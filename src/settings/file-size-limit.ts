import { parseByteSize, type Parsed } from './values.js';

/**
 * The smallest `output.max_bytes_per_file` a run honours: a file is cut between pages of rows
 * (a page's Parquet is tens of KB), so a smaller limit would give files many times its size.
 */
export const MIN_BYTES_PER_FILE = 1_000_000;

/** A byte size (as parseByteSize) of at least MIN_BYTES_PER_FILE. */
export function parseFileSizeLimit(input: unknown): Parsed<number> {
  const size = parseByteSize(typeof input === 'string' && /^\d+$/.test(input.trim()) ? Number(input) : input);
  if (!size.ok || size.value >= MIN_BYTES_PER_FILE) return size;
  return {
    ok: false,
    problem: 'is below 1MB, the smallest file size a run can honour',
    hint: 'files are cut between pages of rows (tens of KB each), so a smaller limit would not hold: write 1MB or more',
  };
}
