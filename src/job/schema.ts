/**
 * The job file, defined once with zod: the TypeScript types (`JobFileInput` as written,
 * `Job` normalised) and the published JSON Schema (schema/job.schema.json, `npm run schema`)
 * both come from here. Every field is documented with `.describe()`.
 *
 * The file's fields are in file-shape.ts (targets' in target-schemas.ts, the range's in
 * range.ts); the normalised `Job` and its types in job.ts; here, the checks that need the whole
 * file, which turn it into a `Job`.
 */
import { z } from 'zod';
import type { FileProblem } from '../yaml-file/problems.js';
import { datasetsWhere, type DatasetName } from '../datasets/index.js';
import { partitioningUses } from '../sink/partitioning.js';
import { jobFileSettings, orNull, type JobFileSettings } from '../settings/file-sections.js';
import { compressionAllowed, compressionsList } from '../sink/formats.js';
import { fileShape, type FileValue, type JobSchemaContext } from './file-shape.js';
import type { Job } from './job.js';
import { checkRange } from './range.js';
import { issue, type Ctx } from './schema-issue.js';
import { checkChains, normaliseTarget, type SeenTargets } from './targets.js';

export * from './job.js';
export { TABLE_NAME_MAX, TABLE_NAME_PATTERN } from './target-schemas.js';
export type { JobSchemaContext } from './file-shape.js';

export function jobFileSchema(sctx: JobSchemaContext) {
  return fileShape(sctx).transform((f, ctx): Job => {
    const warnings: FileProblem[] = [];
    checkChains(f.source.chains, ctx, ['source', 'chains']);
    const jobFilters = f.filters ?? {};
    const seen: SeenTargets = { keys: new Map(), reportedJobFilters: new Set() };
    const targets = f.targets.map((t, index) => normaliseTarget({ f, ctx, sctx, seen, warnings }, t, index));

    const all = new Set<DatasetName>(targets.flatMap((t) => t.datasets));
    const range = checkRange(f, all, ctx);
    checkAggregatesSection(f, all, ctx);
    const settings = jobFileSettings(f);
    checkOutput(settings.output, all, ctx);

    return {
      name: f.name,
      description: f.description ?? null,
      jobFile: sctx.jobFile,
      source: { ...orNull('source', settings.source), chains: f.source.chains },
      targets,
      aggregates: f.aggregates ? { group_by: f.aggregates.group_by ?? [], aggregate: f.aggregates.aggregate ?? [] } : null,
      range,
      filters: Object.fromEntries(Object.entries(jobFilters).map(([k, v]) => [k, String(v)])),
      decode: f.decode ?? true,
      output: settings.output,
      concurrency: settings.concurrency,
      retries: settings.retries,
      warnings,
    };
  });
}

/** The aggregates section: required by the datasets that read it, refused without them. */
function checkAggregatesSection(f: FileValue, all: Set<DatasetName>, ctx: Ctx): void {
  const sectionUsers = datasetsWhere((c) => c.readsJobAggregates === true);
  if ([...all].some((d) => sectionUsers.includes(d))) {
    if (!f.aggregates || ((f.aggregates.aggregate?.length ?? 0) === 0 && (f.aggregates.group_by?.length ?? 0) === 0)) {
      issue(ctx, ['aggregates'], `needs group_by and/or aggregate: a target exports the ${sectionUsers.join(', ')} dataset`, {
        noValue: true,
        hint: 'e.g. aggregates: {group_by: [chain_id], aggregate: ["count() as tx_count"]}',
      });
    }
  } else if (f.aggregates) {
    issue(ctx, ['aggregates'], `is set but no target lists the ${sectionUsers.join(', ')} dataset`, {
      noValue: true,
      atKey: true,
      hint: `add ${sectionUsers.map((d) => `"${d}"`).join(' or ')} to a target's datasets`,
    });
  }
}

/** The output section's rules that depend on the job's datasets. */
function checkOutput(output: JobFileSettings['output'], all: Set<DatasetName>, ctx: Ctx): void {
  if (output.format === 'ndjson' && output.compression && !compressionAllowed('ndjson', output.compression)) {
    issue(ctx, ['output', 'compression'], `is not available for NDJSON (${compressionsList('ndjson')})`, {}, output.compression);
  }
  if (output.partitioning !== undefined && all.size > 1 && !partitioningUses(output.partitioning, 'dataset')) {
    issue(ctx, ['output', 'partitioning'], 'has no {dataset} but the job exports several datasets', {
      hint: 'files of different datasets have different columns: keep them in different folders',
    });
  }
}

/** The schema as published (paths do not matter for the JSON Schema). */
export const JobFileSchema = jobFileSchema({ cwd: '/', jobDir: '/', jobFile: 'job.yaml' });
export type JobFileInput = z.input<typeof JobFileSchema>;

export function jobJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(JobFileSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  // Top-level `x-` keys are the file's own blocks (anchored and merged elsewhere): the loader drops them (load.ts).
  const extensionKeys = {
    '^x-': { description: "The file's own block (to anchor and merge elsewhere, as in docker-compose files): the job ignores it." },
  };
  return { $schema: schema.$schema, title: 'insight-export job', ...schema, patternProperties: extensionKeys };
}
