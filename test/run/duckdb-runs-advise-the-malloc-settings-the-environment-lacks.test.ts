/**
 * The DuckDB engine's memory figures assume glibc malloc settings that only the environment can
 * give (src/run/malloc-tuning.ts): a run says which of them are missing, and only those, once.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { adviseMallocTuning, MALLOC_TUNING, missingMallocTuning } from '../../src/run/malloc-tuning.js';

function captured(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk.toString('utf8'));
      cb();
    },
  });
  return {
    logger: pino({ level: 'info' }, sink),
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('malloc settings for the DuckDB engine', () => {
  it('names exactly the settings the environment lacks, with their values', () => {
    const names = Object.keys(MALLOC_TUNING);
    expect(names.length).toBeGreaterThan(0);
    expect(missingMallocTuning({}, 'linux')).toEqual(names);
    expect(missingMallocTuning({ ...MALLOC_TUNING }, 'linux')).toEqual([]);
    // A user's own value counts as set: it is never second-guessed.
    expect(missingMallocTuning({ [names[0]!]: '8' }, 'linux')).toEqual(names.slice(1));
    // Not glibc: nothing to advise.
    expect(missingMallocTuning({}, 'darwin')).toEqual([]);
  });

  it('logs one info line listing the missing settings, and nothing when all are set', () => {
    const names = Object.keys(MALLOC_TUNING);
    const some = captured();
    adviseMallocTuning(some.logger, { [names[0]!]: MALLOC_TUNING[names[0]!] });
    const lines = some.lines();
    expect(lines).toHaveLength(process.platform === 'linux' ? 1 : 0);
    if (process.platform === 'linux') {
      expect(lines[0]!.set).toEqual(Object.fromEntries(names.slice(1).map((n) => [n, MALLOC_TUNING[n]])));
      expect(lines[0]!.level).toBe(30);
    }
    const all = captured();
    adviseMallocTuning(all.logger, { ...MALLOC_TUNING });
    expect(all.lines()).toEqual([]);
  });
});
