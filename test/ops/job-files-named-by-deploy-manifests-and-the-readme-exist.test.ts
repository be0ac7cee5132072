/**
 * Issue 31.5: deploy/cron/crontab (and every other deployment example) ran
 * `jobs/usdc-transfers.yaml`, which the repository does not have. Every job file the README, docs/,
 * the Dockerfiles and deploy/ name exists in jobs/ and loads. One-letter names (`jobs/x.yaml`,
 * `jobs/a.yaml`) are the documents' stand-ins for "your job file".
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { REPO } from './helpers.js';

const STAND_IN = /^jobs\/[a-z]\.yaml$/;

function filesUnder(dir: string): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(REPO, join(e.parentPath, e.name)));
}

const documents = ['README.md', ...filesUnder('docs'), 'Dockerfile', ...filesUnder('deploy')];

it('every job file the README, docs/, the Dockerfiles and deploy/ name is in jobs/ and loads', async () => {
  const named = new Map<string, string[]>();
  for (const doc of documents) {
    for (const [file] of readFileSync(join(REPO, doc), 'utf8').matchAll(/\bjobs\/[\w.-]+\.(?:ya?ml|json)\b/g)) {
      if (!STAND_IN.test(file)) named.set(file, [...(named.get(file) ?? []), doc]);
    }
  }
  // The deployment examples all name a job (cron, Kubernetes, AWS Batch).
  expect([...named.values()].flat()).toEqual(expect.arrayContaining(['deploy/cron/crontab', 'deploy/aws-batch/job-definition.json']));
  for (const [file, where] of named) {
    const job = await loadJob(join(REPO, file)).catch((err: Error) => err);
    expect(job instanceof Error ? `${file} (named in ${where.join(', ')}): ${job.message}` : file).toBe(file);
  }
});
