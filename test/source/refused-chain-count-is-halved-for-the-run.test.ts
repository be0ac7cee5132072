/**
 * Issue 45.10: the contract takes 55 chain ids per request; the hosted service's own client
 * documents 50. A service that refuses a request for its number of chains (a 400 saying so) must
 * not fail the job: the run halves the number (source.chain_ids_per_request), keeps it for the
 * rest of the run, says so once in the log, and exports every row. Driven through the CLI against
 * a sandbox taking one chain id per list request (maxChainIdsPerRequest); the same job against a
 * sandbox of the contract's limit gives the rows to expect.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { withSandbox } from '../helpers/knob-sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('chain-count-');
const REFUSAL_LOG = 'chain ids in one request';

function job(name: string, wallet: string, out: string): string {
  return `name: ${name}
source:
  chains: [1, 8453, 42161]
targets:
  - wallet: "${wallet}"
    datasets: [transactions]
range:
  from: "2024-02-01"
  to: "2024-02-03"
  chunk: 1d
output:
  format: ndjson
  destination: ${out}
`;
}

async function exportWith(name: string, maxChainIdsPerRequest: number | undefined, extra: string[] = []) {
  return withSandbox({ maxChainIdsPerRequest }, async (s) => {
    const file = join(tmp.dir, `${name}.yaml`);
    writeFileSync(file, job(name, s.data.wallets[0]!.address, join(tmp.dir, name)));
    const r = await runCli(['run', file, '--base-url', s.url, '--json', ...extra], { logs: true });
    expect(r.code, r.stderr).toBe(0);
    return { report: JSON.parse(r.stdout), refusals: r.stderr.split('\n').filter((l) => l.includes(REFUSAL_LOG)) };
  });
}

it('a service refusing the number of chains per request: halved for the run, logged once, every row exported', async () => {
  const expected = await exportWith('contract-limit', undefined);
  expect(expected.refusals).toHaveLength(0);
  const refused = await exportWith('one-chain-per-request', 1);
  expect(refused.report.status).toBe('succeeded');
  expect(refused.report.rows).toBe(expected.report.rows);
  expect(refused.report.rows).toBeGreaterThan(0);
  expect(refused.report.windows).toEqual(expected.report.windows);
  // Two windows of three chains asked at once: one warning for the run, naming the number it keeps.
  expect(refused.refusals).toHaveLength(1);
  expect(refused.refusals[0]).toContain('sends at most 1');
}, 60_000);

it('source.chain_ids_per_request set to what the service takes: no refusal at all', async () => {
  const r = await exportWith('one-chain-set', 1, ['--chain-ids-per-request', '1']);
  expect(r.report.status).toBe('succeeded');
  expect(r.refusals).toHaveLength(0);
}, 60_000);
