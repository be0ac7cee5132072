/**
 * Issue 43 item 1: `plan` takes its plan from planRun through the run's read-only open
 * (planReadOnly), not from steps of its own. What that open refuses, `plan` refuses as `run --dry-run`
 * does: here partitions another job owns at the destination (plan printed a plan for them, exit 0,
 * while every run was refused). Both exit 2 and leave the destination byte for byte as it was.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 43, transactions: 1_000 });
const tmp = useTempDir('plan-open-');

const job = (name: string) => ({
  name,
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
  output: { format: 'ndjson' },
});

const files = (out: string) =>
  Object.fromEntries(
    listFiles(out).map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(out, f)))
        .digest('hex'),
    ]),
  );

it('plan refuses partitions another job owns, as run --dry-run does, and writes nothing', async () => {
  const dir = join(tmp.dir, 'owned');
  const out = join(dir, 'out');
  const first = await exportJob({ job: job('first'), dir, jobFileName: 'first.yaml', sandbox, destination: out });
  expect(first.status).toBe('succeeded');
  const file = join(dir, 'second.yaml');
  writeFileSync(file, stringify(job('second')));
  const before = files(out);
  const flags = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--log-level', 'silent'];
  for (const argv of [['plan'], ['run', '--dry-run']]) {
    const res = await runCli([...argv, file, ...flags]);
    expect(res.code, `${argv.join(' ')}: ${res.stdout}${res.stderr}`).toBe(ExitCode.badInput);
    expect(res.stderr).toContain('Another job already exports these partitions');
  }
  expect(files(out)).toEqual(before);
});
