/**
 * The example manifests in deploy/ (no cluster or AWS account here, so they are checked for what
 * the exporter relies on): an Indexed Job whose JOB_COMPLETION_COUNT equals its completions and
 * whose pods resolve to shards 0..N-1; an AWS Batch array job whose AWS_BATCH_JOB_ARRAY_SIZE
 * equals its array size; one run at a time for cron jobs; secrets only by reference; non-root;
 * every environment variable one the exporter reads; every CLI argument one the CLI accepts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ENV_VARS } from '../../src/config/index.js';
import { resolveShard } from '../../src/run/shard.js';
import yargs from 'yargs';
import { commands } from '../../src/commands/index.js';
import { REPO } from './helpers.js';

type Obj = Record<string, any>;

const k8s = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(join(REPO, 'deploy/kubernetes', file), 'utf8')).map((d) => d.toJSON() as Obj);
const json = (file: string): Obj => JSON.parse(readFileSync(join(REPO, 'deploy/aws-batch', file), 'utf8')) as Obj;

/** Variables the exporter (or the AWS SDK's default chain) reads. */
const KNOWN_ENV = new Set([
  ...Object.keys(ENV_VARS),
  'INSIGHT_EXPORT_PUSHGATEWAY_URL',
  'INSIGHT_EXPORT_SHARD',
  'JOB_COMPLETION_COUNT',
  'AWS_BATCH_JOB_ARRAY_SIZE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
]);

function podSpecs(): { name: string; pod: Obj }[] {
  const out: { name: string; pod: Obj }[] = [];
  for (const file of ['cronjob-incremental.yaml', 'backfill-indexed-job.yaml']) {
    for (const doc of k8s(file)) {
      if (doc.kind === 'CronJob') out.push({ name: doc.metadata.name, pod: doc.spec.jobTemplate.spec.template.spec });
      if (doc.kind === 'Job') out.push({ name: doc.metadata.name, pod: doc.spec.template.spec });
    }
  }
  return out;
}

describe('deploy/', () => {
  it('the Indexed Job declares its shard count, and its pods resolve to shards 0..N-1', () => {
    const job = k8s('backfill-indexed-job.yaml').find((d) => d.kind === 'Job')!;
    expect(job.spec.completionMode).toBe('Indexed');
    const n = job.spec.completions as number;
    expect(n).toBeGreaterThan(1);
    const env = Object.fromEntries(
      (job.spec.template.spec.containers[0].env as Obj[]).filter((e) => 'value' in e).map((e) => [e.name, String(e.value)]),
    );
    expect(env.JOB_COMPLETION_COUNT).toBe(String(n));
    const shards = Array.from({ length: n }, (_, i) => resolveShard(undefined, { ...env, JOB_COMPLETION_INDEX: String(i) }));
    expect(shards).toEqual(Array.from({ length: n }, (_, i) => ({ index: i, count: n })));
  });

  it('the AWS Batch array job declares its size to the children', () => {
    const submit = json('submit-sharded-backfill.json');
    const size = submit.arrayProperties.size as number;
    const env = Object.fromEntries((submit.containerOverrides.environment as Obj[]).map((e) => [e.name, e.value as string]));
    expect(env.AWS_BATCH_JOB_ARRAY_SIZE).toBe(String(size));
    expect(resolveShard(undefined, { ...env, AWS_BATCH_JOB_ARRAY_INDEX: String(size - 1) })).toEqual({ index: size - 1, count: size });
    const def = json('job-definition.json');
    expect(submit.jobDefinition).toBe(def.jobDefinitionName);
    expect(def.containerProperties.command[0]).toBe('run');
    const secrets = (def.containerProperties.secrets as Obj[]).map((s) => s.name);
    expect(secrets).toEqual(expect.arrayContaining(['INSIGHT_CLIENT_ID', 'INSIGHT_SECRET_KEY']));
    const plain = [...(def.containerProperties.environment as Obj[]), ...(submit.containerOverrides.environment as Obj[])].map(
      (e) => e.name as string,
    );
    expect(plain.filter((n) => /SECRET|CLIENT_ID|ACCESS_KEY/.test(n))).toEqual([]);
    for (const name of [...plain, ...secrets]) expect(KNOWN_ENV.has(name), name).toBe(true);
    // Bad input (exit 2) is final; the rest is retried (a retry exports only what is missing).
    expect(def.retryStrategy.evaluateOnExit[0]).toEqual({ onExitCode: '2', action: 'EXIT' });
  });

  it('pods run as non-root, one run of a cron job at a time, secrets by reference, known variables only', () => {
    const pods = podSpecs();
    expect(pods.length).toBe(3);
    for (const doc of k8s('cronjob-incremental.yaml').filter((d) => d.kind === 'CronJob'))
      expect(doc.spec.concurrencyPolicy).toBe('Forbid');
    for (const { name, pod } of pods) {
      expect(pod.securityContext.runAsNonRoot, name).toBe(true);
      expect(pod.restartPolicy, name).toBe('Never');
      const c = pod.containers[0] as Obj;
      expect(['run', 'compact']).toContain(c.args[0]);
      for (const e of c.env as Obj[]) {
        expect(KNOWN_ENV.has(e.name), `${name}: ${e.name}`).toBe(true);
        if (/SECRET|CLIENT_ID|ACCESS_KEY/.test(e.name))
          expect(e.valueFrom?.secretKeyRef, `${name}: ${e.name} must come from a Secret`).toBeDefined();
      }
      expect((c.volumeMounts as Obj[]).map((m) => m.mountPath)).toEqual(expect.arrayContaining(['/work/jobs', '/tmp']));
    }
  });

  it('every command line in the manifests and the crontab uses commands and options the CLI knows', async () => {
    const lines: string[][] = podSpecs().map(({ pod }) => pod.containers[0].args as string[]);
    lines.push(json('job-definition.json').containerProperties.command as string[]);
    for (const l of readFileSync(join(REPO, 'deploy/cron/crontab'), 'utf8').split('\n')) {
      const m = / insight-export (.*?) >>/.exec(l);
      if (m && !l.startsWith('#')) lines.push(m[1]!.split(/\s+/));
    }
    expect(lines.length).toBeGreaterThanOrEqual(6);
    // The CLI's own parser (strict, with choices), the commands' handlers replaced by a recorder.
    const parse = async (args: string[]): Promise<string | null> => {
      let ran: string | null = null;
      const mods = (await commands(() => undefined)).map((c: any) => ({
        ...c,
        handler: () => void (ran = String(c.command).split(' ')[0] ?? null),
      }));
      await yargs(args)
        .command(mods)
        .strict()
        .exitProcess(false)
        .fail((msg, err) => {
          throw err ?? new Error(msg);
        })
        .parseAsync();
      return ran;
    };
    for (const args of lines) expect(await parse(args), args.join(' ')).toBe(args[0] ?? '');
    await expect(parse(['run', 'jobs/x.yaml', '--no-such-option'])).rejects.toThrow(/Unknown argument/);
    await expect(parse(['compact', 'jobs/x.yaml', '--format', 'csv'])).rejects.toThrow(/Invalid values/);
  });
});
