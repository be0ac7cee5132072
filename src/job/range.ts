/** The job file's `range`: its schema, and its normalisation to a `JobRange` on one axis (blocks or time) with defaults filled. */
import { z } from 'zod';
import { capabilitiesOf, isSnapshot, type DatasetName } from '../datasets/index.js';
import { SETTINGS } from '../settings/settings.js';
import { DURATION_PATTERN, formatDuration, isDateLike, parseDurationSeconds, parseTimePoint } from '../settings/values.js';
import {
  DEFAULT_BLOCK_CHUNK,
  DEFAULT_BLOCK_SAFETY_LAG,
  DEFAULT_TIME_CHUNK,
  DEFAULT_TIME_SAFETY_LAG,
  type Axis,
  type JobRange,
} from './job.js';
import { issue, type Ctx } from './schema-issue.js';

const DAY = 86_400;
/** Integers from here on, written without `by:`, look like unix times rather than block numbers. */
const LOOKS_LIKE_UNIX_TIME = 1_000_000_000;

const rangePointSchema = z.union([
  z.number().int().min(0).describe('A block number, or unix seconds with `by: time`.'),
  z.string().describe('A UTC date "2024-01-01" or date-time "2024-01-01T00:00:00Z" (implies `by: time`).'),
]);

export const rangeSchema = z
  .strictObject({
    by: z
      .enum(['block', 'time'])
      .optional()
      .describe(
        'What the range counts. Without it: integers are block numbers and dates/times are time; an integer that looks like a unix time (>= 1e9) is refused as ambiguous. With `by: time`, integers are unix seconds.',
      ),
    from: rangePointSchema.describe(SETTINGS['range.from'].doc),
    to: z.union([rangePointSchema, z.literal('latest')]).describe(SETTINGS['range.to'].doc),
    safety_lag: z
      .union([z.number().int().min(0), z.string().regex(new RegExp(DURATION_PATTERN), { error: 'is not a duration (e.g. "10m")' })])
      .optional()
      .describe(
        `Only with to: latest. Blocks (by: block, default ${DEFAULT_BLOCK_SAFETY_LAG}) or a duration (by: time, default "${formatDuration(DEFAULT_TIME_SAFETY_LAG)}") kept back from the head, against chain reorganisations.`,
      ),
    chunk: z
      .union([z.number().int().min(1), z.string().regex(new RegExp(DURATION_PATTERN), { error: 'is not a duration (e.g. "1d", "6h")' })])
      .optional()
      .describe(
        `Window size: blocks (by: block, default ${DEFAULT_BLOCK_CHUNK}) or a duration (by: time, default "1d"; must divide a day or be whole days). Windows are aligned to multiples of it so re-runs reuse the same windows.`,
      ),
    reorg_horizon: z
      .union([z.number().int().min(0), z.record(z.string().regex(/^\d+$/, { error: 'is not a chain id' }), z.number().int().min(0))])
      .optional()
      .describe(
        'Blocks below the newest exported block within which every run checks the recorded block hashes of the windows and exports again those a reorganisation replaced; a deeper reorganisation fails the run and names the range. One number for every chain, or per chain id ({"1": 128}); defaults per chain: see docs/operations.md (Reorganisations).',
      ),
  })
  .describe('Half-open range [from, to) over block numbers or block timestamps, cut into aligned windows.');

export type FileRange = z.output<typeof rangeSchema>;
const rangeAt = (k: string) => ['range', k];

/** Applies the axis rule and fills defaults; issues go to `ctx`. */
function normaliseRange(range: FileRange, ctx: Ctx): JobRange | null {
  const r = exactNumbers(range, ctx);
  if (!r) return null;
  const by = rangeAxis(r, ctx);
  if (!by) return null;
  let ok = true;
  const from = rangePoint(r, 'from', by, ctx);
  const to = rangePoint(r, 'to', by, ctx);
  if (from === null || to === null || from === 'latest') return null;
  if (typeof to === 'number' && from >= to) {
    issue(ctx, rangeAt('to'), `is not after range.from (${r.from}): the range [from, to) would be empty`, {
      hint: '"to" is exclusive: to export one day write from: "2024-01-01", to: "2024-01-02"',
    });
    ok = false;
  }
  const chunk = rangeAmount(r, 'chunk', by === 'block' ? DEFAULT_BLOCK_CHUNK : DEFAULT_TIME_CHUNK, by, ctx);
  const lag = rangeAmount(r, 'safety_lag', by === 'block' ? DEFAULT_BLOCK_SAFETY_LAG : DEFAULT_TIME_SAFETY_LAG, by, ctx);
  if (chunk !== null && chunk <= 0) {
    issue(ctx, rangeAt('chunk'), 'must be greater than 0');
    ok = false;
  }
  if (chunk !== null && chunk > 0 && by === 'time' && DAY % chunk !== 0 && chunk % DAY !== 0) {
    issue(ctx, rangeAt('chunk'), 'does not divide a day and is not a whole number of days', {
      hint: 'time windows are aligned to UTC midnight: use e.g. "1h", "6h", "12h", "1d", "7d"',
    });
    ok = false;
  }
  if (r.safety_lag !== undefined && to !== 'latest') {
    issue(ctx, rangeAt('safety_lag'), 'only applies with to: latest', { noValue: false, hint: 'remove it, or set to: latest' });
    ok = false;
  }
  if (!ok || chunk === null || lag === null) return null;
  return { by, from, to, safety_lag: lag, chunk, ...(r.reorg_horizon === undefined ? {} : { reorg_horizon: r.reorg_horizon }) };
}

/** A quoted whole number is still a number; one beyond 2^53 arrives as digits (never rounded) and is refused. */
function exactNumbers(range: FileRange, ctx: Ctx): FileRange | null {
  let r = range;
  for (const k of ['from', 'to'] as const) {
    const v = r[k];
    if (typeof v === 'string' && /^\d+$/.test(v.trim())) {
      const n = Number(v.trim());
      if (!Number.isSafeInteger(n)) {
        issue(ctx, rangeAt(k), 'is too large to be exact (above 2^53)', { noValue: false });
        return null;
      }
      r = { ...r, [k]: n };
    }
  }
  return r;
}

const kindOf = (v: unknown): 'block' | 'time' | 'latest' => (v === 'latest' ? 'latest' : typeof v === 'string' ? 'time' : 'block');

/** range.by, or what from and to imply: dates count time, numbers blocks (not both, and no unix time taken for a block). */
function rangeAxis(r: FileRange, ctx: Ctx): Axis | null {
  if (r.by) return r.by;
  const kinds = [kindOf(r.from), kindOf(r.to)].filter((k) => k !== 'latest');
  if (kinds.includes('time') && kinds.includes('block')) {
    const which = kindOf(r.from) === 'block' ? 'from' : 'to';
    issue(ctx, rangeAt(which), `is a block number but range.${which === 'from' ? 'to' : 'from'} is a date`, {
      hint: 'use dates on both ends, or set "by: time" and give unix seconds',
    });
    return null;
  }
  const by = kinds.includes('time') ? 'time' : 'block';
  for (const k of ['from', 'to'] as const) {
    const v = r[k];
    if (by === 'block' && typeof v === 'number' && v >= LOOKS_LIKE_UNIX_TIME) {
      issue(ctx, rangeAt(k), 'looks like a unix time, not a block number', {
        hint: 'add "by: time" if it is unix seconds, or "by: block" if it really is a block number',
      });
      return null;
    }
  }
  return by;
}

/** range.from or range.to on the axis: a block number, unix seconds, or "latest" (to only). */
function rangePoint(r: FileRange, k: 'from' | 'to', by: Axis, ctx: Ctx): number | 'latest' | null {
  const v = r[k];
  if (v === 'latest') {
    if (k === 'from') {
      issue(ctx, rangeAt(k), 'cannot be "latest"', { hint: 'from is where the export starts; to: latest follows the chain head' });
      return null;
    }
    return 'latest';
  }
  if (by === 'block') {
    if (typeof v === 'string') {
      issue(ctx, rangeAt(k), isDateLike(v) ? 'is a date but range.by is block' : 'is not a block number', {
        hint: isDateLike(v) ? 'remove "by: block" (or set "by: time") to use dates' : 'write a block number, a UTC date, or "latest"',
      });
      return null;
    }
    return v;
  }
  const t = parseTimePoint(v);
  if (!t.ok) {
    issue(ctx, rangeAt(k), t.problem, { hint: t.hint });
    return null;
  }
  return t.value;
}

/** range.chunk or range.safety_lag on the axis: blocks, or a duration in seconds; `dflt` when absent. */
function rangeAmount(r: FileRange, k: 'chunk' | 'safety_lag', dflt: number, by: Axis, ctx: Ctx): number | null {
  const v = r[k];
  if (v === undefined) return dflt;
  if (by === 'block') {
    if (typeof v === 'string') {
      issue(ctx, rangeAt(k), 'is a duration but the range counts blocks', {
        hint: `write a number of blocks (e.g. ${dflt}), or count time with dates / "by: time"`,
      });
      return null;
    }
    return v;
  }
  if (typeof v === 'number') {
    issue(ctx, rangeAt(k), 'is a number but the range counts time', {
      hint: `write a duration with its unit, e.g. "${formatDuration(dflt)}"`,
    });
    return null;
  }
  const d = parseDurationSeconds(v);
  if (!d.ok) {
    issue(ctx, rangeAt(k), d.problem, { hint: d.hint });
    return null;
  }
  return d.value;
}

/** The range, required when a dataset of the job is not a snapshot, on an axis every ranged dataset of the job takes. */
export function checkRange(f: { range?: FileRange }, all: Set<DatasetName>, ctx: Ctx): JobRange | null {
  let range: JobRange | null = null;
  if (f.range) {
    range = normaliseRange(f.range, ctx);
    const by = range?.by;
    const refusing = [...all].filter((d) => by && !isSnapshot(d) && !capabilitiesOf(d).rangeAxes.includes(by));
    if (by && refusing.length > 0) {
      issue(
        ctx,
        ['range'],
        `counts ${by === 'block' ? 'blocks' : 'time'} but ${refusing.join(', ')} take${refusing.length === 1 ? 's' : ''} ${by === 'block' ? 'time' : 'block'} ranges only`,
        {
          noValue: true,
          hint: by === 'time' ? 'give range.from and range.to as block numbers' : 'give range.from and range.to as dates',
        },
      );
    }
  } else if ([...all].some((d) => !isSnapshot(d))) {
    issue(ctx, ['range'], `is required: the job exports ${[...all].filter((d) => !isSnapshot(d)).join(', ')}`, {
      noValue: true,
      hint: 'add e.g. range: {from: 19000000, to: latest} or range: {from: "2024-01-01", to: "2024-02-01"}',
    });
  }
  return range;
}
