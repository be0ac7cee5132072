/**
 * Output partitioning templates: the folder part of every data file's key, e.g.
 * "{dataset}/chain_id={chain_id}/date={date}" -> "transactions/chain_id=1/date=2024-01-31".
 */
import type { Parsed } from './values.js';

export const DEFAULT_PARTITIONING = '{dataset}/chain_id={chain_id}/date={date}';

/** Values a template may use. `date`/`year`/`month`/`day` are the UTC date of the rows' block_timestamp. */
export const PARTITION_PLACEHOLDERS = ['dataset', 'chain_id', 'target', 'job', 'date', 'year', 'month', 'day'] as const;
export type PartitionPlaceholder = (typeof PARTITION_PLACEHOLDERS)[number];
export type PartitionValues = Partial<Record<PartitionPlaceholder, string | number>>;

const SEGMENT_RE = /^(?:[A-Za-z0-9_.=-]|\{[a-z_]+\})+$/;

export function parsePartitioning(input: unknown): Parsed<string> {
  if (typeof input !== 'string') return { ok: false, problem: 'is not a partitioning template' };
  const t = input.trim().replace(/\/+$/, '');
  if (t === '') return { ok: true, value: '' };
  if (t.startsWith('/')) return { ok: false, problem: 'must be relative (no leading "/")' };
  for (const seg of t.split('/')) {
    if (seg === '' || seg === '.' || seg === '..')
      return { ok: false, problem: 'has an empty, "." or ".." folder', hint: `e.g. "${DEFAULT_PARTITIONING}"` };
    if (!SEGMENT_RE.test(seg)) {
      return { ok: false, problem: `has an invalid folder "${seg}"`, hint: 'use letters, digits, "_", "-", ".", "=" and {placeholders}' };
    }
  }
  for (const m of t.matchAll(/\{([a-z_]+)\}/g)) {
    if (!(PARTITION_PLACEHOLDERS as readonly string[]).includes(m[1]!)) {
      return {
        ok: false,
        problem: `uses the unknown placeholder {${m[1]}}`,
        hint: `known: ${PARTITION_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}`,
      };
    }
  }
  return { ok: true, value: t };
}

export function partitioningUses(template: string, name: PartitionPlaceholder): boolean {
  return template.includes(`{${name}}`);
}

/** Fills a validated template. A missing value is a programming error. */
export function renderPartition(template: string, values: PartitionValues): string {
  const date = values.date === undefined ? undefined : String(values.date);
  const all: PartitionValues = {
    year: date?.slice(0, 4),
    month: date?.slice(5, 7),
    day: date?.slice(8, 10),
    ...values,
  };
  return template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const v = all[name as PartitionPlaceholder];
    if (v === undefined) throw new Error(`partitioning placeholder {${name}} has no value`);
    return String(v);
  });
}

/**
 * The keys a template can give a data file of one job: `{job}` is that job's name, every other
 * placeholder one folder name, then the file name. Tells a job's files from another job's that
 * partitions by `{job}` or by another template under the same destination.
 */
export function partitionKeyPattern(template: string, jobName: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const folders = template === '' ? [] : template.split('/');
  const parts = folders.map((seg) =>
    seg
      .split(/(\{[a-z_]+\})/)
      .map((piece) => (piece === '{job}' ? escape(jobName) : /^\{[a-z_]+\}$/.test(piece) ? '[^/]+' : escape(piece)))
      .join(''),
  );
  return new RegExp(`^${[...parts, '[^/]+'].join('/')}$`);
}
