/**
 * Issue 45.8: a 500-wallet job printed 996 "no rows at all" lines, one per stream that exported no
 * row. The summary and the log now say it in one line with the count (naming the first few); the
 * run report's empty_units lists every one. Driven through the CLI against the built-in sandbox.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('empty-streams-');
const EMPTY_WALLETS = 12;

function job(out: string): string {
  const wallet = (i: number) => `0x${(i + 1).toString(16).padStart(2, '0').repeat(20)}`;
  const targets = ['alice.eth', ...Array.from({ length: EMPTY_WALLETS }, (_, i) => wallet(i))]
    .map((w) => `  - wallet: "${w}"\n    datasets: [transactions]`)
    .join('\n');
  return `name: empty-streams
source:
  base_url: sandbox
  chains: [8453]
targets:
${targets}
range:
  from: "2024-02-01"
  to: "2024-02-02"
  chunk: 1d
output:
  format: ndjson
  destination: ${out}
`;
}

it('a run with many streams without rows warns in one line with the count; the report lists them all', async () => {
  const out = join(tmp.dir, 'out');
  const file = join(tmp.dir, 'job.yaml');
  writeFileSync(file, job(out));
  const r = await runCli(['run', file], { logs: true });
  expect(r.code, r.stderr).toBe(0);
  const lines = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes('no rows at all'));
  // One line in the summary, one in the log.
  expect(lines).toHaveLength(2);
  for (const line of lines) expect(line).toContain(`no rows at all for ${EMPTY_WALLETS} streams`);
  expect(lines.join('\n')).toContain(`and ${EMPTY_WALLETS - 3} more`);
  const reports = join(out, '_state/empty-streams/reports');
  const name = readdirSync(reports).find((f) => f !== 'last-run.json' && f.endsWith('.json'))!;
  const report = JSON.parse(readFileSync(join(reports, name), 'utf8'));
  expect(report.empty_units).toHaveLength(EMPTY_WALLETS);
}, 60_000);
