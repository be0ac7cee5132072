import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what survived the last full collection, in percent.
 *
 * An export keeps little alive (pages ahead, rows being encoded: ~50-70 MB) but allocates fast,
 * and V8 then lets the old generation reach ~4x that before collecting it again (`--trace-gc`
 * of a run: 250 MB of heap for 60 MB live). At 1.5x the exporter's peak RSS at 1M rows is
 * 150-180 MB lower for 5-10% more run time (bench/RESULTS.md, "Memory"). `verify` reads every
 * window's record the same way (the scale part of the bench).
 */
const HEAP_GROWING_PERCENT = 50;

let applied = false;

/** Caps V8's heap growth for this process. The flag is read at every collection, so setting it at run time takes effect. */
export function limitHeapGrowth(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
