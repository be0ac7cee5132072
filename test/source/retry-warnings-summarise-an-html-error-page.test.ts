/**
 * A load balancer in front of the service answers 503 with an HTML page (~400 bytes of markup):
 * each retry warning, and the error a run ends with, summarise it (status, content type, title,
 * length) instead of printing the page.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildTestCli, runCli, type TestCli } from '../reliability/harness.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 5, transactions: 1_000, faults: { rates: { http503: 1 }, htmlPages: true } });
const tmp = useTempDir('html-503-');
// A child process: the log lines go to its stderr as an operator sees them.
let cli: TestCli;
beforeAll(async () => {
  cli = await buildTestCli();
});
afterAll(async () => {
  await cli?.remove();
});

it('503 pages in HTML: the retry warnings and the final error name status, type, title and length, not the markup', async () => {
  const file = join(tmp.dir, 'job.yaml');
  await writeFile(
    file,
    stringify({
      name: 'html503',
      source: { base_url: sandbox.url, chains: [1] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { by: 'block', from: 19_130_000, to: 19_130_100, chunk: 100 },
      output: { destination: join(tmp.dir, 'out'), format: 'ndjson' },
      retries: { max_attempts: 2 },
    }),
  );
  const r = await runCli(cli, ['run', file, '--log-level', 'warn', '--log-format', 'json']);
  const warnings = r.stderr.split('\n').filter((l) => l.includes('read interface request failed; retrying'));
  expect(warnings.length).toBeGreaterThan(0);
  for (const line of warnings) {
    const { error } = JSON.parse(line) as { error: string };
    expect(error).toMatch(/^HTTP 503 from the read interface: text\/html body of \d+ bytes: "503 Service Temporarily Unavailable"$/);
  }
  expect(r.stderr).not.toMatch(/<html|<center|padding to disable/);
  expect(r.stderr).toMatch(/^error: .*HTTP 503 from the read interface: text\/html body of \d+ bytes/m);
  expect(r.code).toBe(1);
  console.log(`[html] ${warnings.length} retry warnings, e.g. ${(JSON.parse(warnings[0]!) as { error: string }).error}`);
});
