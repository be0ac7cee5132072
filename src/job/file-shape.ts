/** The job file as written: its fields and their docs, before the checks that need the whole file (src/job/schema.ts). */
import { z } from 'zod';
import { datasetsWhere } from '../datasets/index.js';
import { rangeSchema } from './range.js';
import { settingsSections } from './settings.js';
import { chainsSchema, chainTargetSchema, contractTargetSchema, filtersSchema, walletTargetSchema } from './target-schemas.js';

export interface JobSchemaContext {
  /** Directory relative local destinations are taken from (the run's working directory); `{job_dir}/...` is taken from jobDir. */
  cwd: string;
  /** Directory of the job file (ABI paths are relative to it, and `{job_dir}` in the destination names it). */
  jobDir: string;
  jobFile: string;
  /** Locates warnings (defaults to 1:1). */
  locate?: (path: (string | number)[]) => { line: number; column: number };
}

export function fileShape(ctx: JobSchemaContext) {
  const settings = settingsSections(ctx.cwd, ctx.jobDir);
  return z
    .strictObject({
      $schema: z.string().optional().describe('JSON Schema reference for editors; ignored.'),
      name: z
        .string()
        .regex(/^[a-z0-9][a-z0-9_-]*$/, {
          error: 'is not a job name (lowercase letters, digits, "_" and "-", starting with a letter or digit)',
        })
        .max(100)
        .describe('Job name: [a-z0-9][a-z0-9_-]*; names the state of the job at the destination.'),
      description: z.string().optional().describe('Free text.'),
      source: z
        .strictObject({ ...settings.source, chains: chainsSchema })
        .describe('Where the data comes from. Keys and secrets are never written here: they come from the environment.'),
      targets: z
        .array(z.union([walletTargetSchema, contractTargetSchema, chainTargetSchema]))
        .min(1)
        .describe(
          'Wallets, contracts and chain targets to export. Each target x dataset x chain is one stream, exported window by window.',
        ),
      aggregates: z
        .strictObject({
          group_by: z
            .array(z.string().trim().min(1))
            .optional()
            .describe('Group columns or expressions, e.g. [chain_id, "toDate(block_timestamp) as day"].'),
          aggregate: z
            .array(z.string().trim().min(1))
            .optional()
            .describe('Aggregate expressions, e.g. ["count() as tx_count", "sum(gas_used) as gas"].'),
        })
        .optional()
        .describe(
          `For the ${datasetsWhere((c) => c.readsJobAggregates === true).join(', ')} dataset: rows are computed per window, so group by a bucket no larger than range.chunk.`,
        ),
      range: rangeSchema.optional(),
      filters: filtersSchema.optional(),
      decode: z.boolean().optional().describe('Ask the service to decode transactions/events (default true).'),
      output: settings.output.optional(),
      concurrency: settings.concurrency.optional(),
      retries: settings.retries.optional(),
    })
    .describe('An insight-export job: what to export from the read interface, over which range, to where.');
}

export type FileValue = z.output<ReturnType<typeof fileShape>>;
