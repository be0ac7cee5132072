import type { Logger } from '../log.js';

/**
 * glibc malloc settings for an exporter that converts with DuckDB. DuckDB's conversions run on the
 * libuv thread pool; by default each of those threads gets its own malloc arena, and glibc raises
 * its mmap threshold after the first large frees, so the memory of finished conversions stays with
 * the process. Two arenas and a fixed 128 KiB mmap threshold give most of it back: peak RSS of the
 * DuckDB engine at 1M rows 439-451 -> 394-431 MB, at 5M 468 -> 415-427 MB, throughput unchanged
 * within noise (bench/RESULTS.md).
 * glibc reads them once at process start, so they must come from the environment: the container
 * image sets them, and the bench runs the exporter with them.
 */
export const MALLOC_TUNING: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
};

/** The settings of MALLOC_TUNING the environment does not set (glibc only: empty elsewhere). */
export function missingMallocTuning(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  if (platform !== 'linux') return [];
  return Object.keys(MALLOC_TUNING).filter((name) => env[name] === undefined);
}

/** One info line naming the settings the environment lacks, with their values (nothing when none is missing). */
export function adviseMallocTuning(logger: Logger, env: NodeJS.ProcessEnv = process.env): void {
  const missing = missingMallocTuning(env);
  if (missing.length === 0) return;
  logger.info(
    { set: Object.fromEntries(missing.map((name) => [name, MALLOC_TUNING[name]])) },
    'DuckDB engine: setting these in the environment lowers peak memory by ~40 MB (the container image does)',
  );
}
