/**
 * Output partitioning templates: the folder part of every data file's key, e.g.
 * "{dataset}/chain_id={chain_id}/date={date}" -> "transactions/chain_id=1/date=2024-01-31".
 * Validated as a setting (src/settings/partitioning.ts), filled by the sink.
 */
export const DEFAULT_PARTITIONING = '{dataset}/chain_id={chain_id}/date={date}';

/** Values a template may use. `date`/`year`/`month`/`day` are the UTC date of the rows' block_timestamp. */
export const PARTITION_PLACEHOLDERS = ['dataset', 'chain_id', 'target', 'job', 'date', 'year', 'month', 'day'] as const;
export type PartitionPlaceholder = (typeof PARTITION_PLACEHOLDERS)[number];
export type PartitionValues = Partial<Record<PartitionPlaceholder, string | number>>;

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
 * The keys a template can give a data file: every placeholder one folder name (captured as a named
 * group, the first time it appears), then the file name. With `jobName`, `{job}` is that job's
 * name: tells a job's files from another job's that partitions by `{job}` or by another template
 * under the same destination.
 */
export function partitionKeyPattern(template: string, jobName?: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const captured = new Set<string>();
  const placeholder = (name: string) => {
    if (name === 'job' && jobName !== undefined) return escape(jobName);
    if (captured.has(name)) return '[^/]+';
    captured.add(name);
    return `(?<${name}>[^/]+)`;
  };
  const folders = template === '' ? [] : template.split('/');
  const parts = folders.map((seg) =>
    seg
      .split(/(\{[a-z_]+\})/)
      .map((piece) => {
        const m = /^\{([a-z_]+)\}$/.exec(piece);
        return m ? placeholder(m[1]!) : escape(piece);
      })
      .join(''),
  );
  return new RegExp(`^${[...parts, '[^/]+'].join('/')}$`);
}
