import type { Axis } from '../job/schema.js';
import type { Interval } from './intervals.js';

/** `[start, end)` of a window or range: ISO 8601 UTC dates for time windows, block numbers for block windows. */
export function formatInterval(axis: Axis, i: Interval): string {
  if (axis === 'block') return `blocks [${i.start}, ${i.end})`;
  return `[${isoUtc(i.start)}, ${isoUtc(i.end)})`;
}

/** A unix time in seconds as an ISO 8601 UTC date, without milliseconds when they are zero. */
export const isoUtc = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
