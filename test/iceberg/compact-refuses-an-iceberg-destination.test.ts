/**
 * Issue 34 (not done yet): compaction of an Iceberg table as a replace snapshot. Until then
 * `compact` refuses an Iceberg destination (exit 2) rather than delete files a snapshot names.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('iceberg-compact-');

it('compact refuses an iceberg destination with exit 2, naming the format', async () => {
  const job = join(tmp.dir, 'job.yaml');
  await writeFile(
    job,
    stringify({
      name: 'icecompact',
      source: { base_url: 'https://insight.example.com/v1', chains: [1] },
      targets: [{ wallet: '0x344940aef33a4e9915b793dfe282f3727eff9869', datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03' },
      output: { format: 'iceberg', destination: join(tmp.dir, 'out') },
    }),
  );
  const r = await runCli(['compact', job]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('compact does not rewrite Iceberg tables yet');
});
