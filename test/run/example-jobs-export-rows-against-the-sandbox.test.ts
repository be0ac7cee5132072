/**
 * Issue 14.1: every job shipped in jobs/ demonstrates something: run against the sandbox (the
 * s3-export job into the test S3 server), each exports rows, and none of its units is empty.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { resolveConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import { runJob } from '../../src/run/run-job.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';

const JOBS = join(import.meta.dirname, '..', '..', 'jobs');
const sandbox = useSandbox({});
const bucket = useTestBucket('example-jobs');
const tmp = useTempDir('example-jobs-');
// The AWS SDK reads the credentials from the environment (its default chain), as in production.
const s3Env = useS3CredentialsInEnv();

const files = readdirSync(JOBS).filter((f) => f.endsWith('.yaml'));

describe('the example jobs', () => {
  it('are all here', () => {
    expect(files.length).toBeGreaterThanOrEqual(7);
  });

  for (const file of files) {
    it(`${file} exports rows from the sandbox`, async () => {
      const job = await loadJob(join(JOBS, file));
      const toS3 = job.output.destination?.kind === 's3';
      const destination = toS3 ? `s3://${bucket.bucket}/${file}` : join(tmp.dir, file);
      const cliFlags =
        job.source.base_url === 'sandbox' ? { destination } : { destination, baseUrl: sandbox.url, explorerUrl: sandbox.explorerUrl };
      const config = resolveConfig({ job, cliFlags, env: toS3 ? s3Env : {}, configFile: null, require: ['source', 'destination'] });
      const report = await runJob({ job, config, logger: silentLogger });
      expect(report.status).toBe('succeeded');
      expect(report.rows).toBeGreaterThan(0);
      expect(report.empty_units).toEqual([]);
    }, 120_000);
  }
});
