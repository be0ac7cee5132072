/**
 * Issue 14.9: `plan` printed unix seconds and 66-character unit keys. It prints ISO 8601 UTC
 * dates for time windows, block numbers for block windows, and short readable unit names;
 * `--json` keeps the full keys and the numbers.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('plan-readable-');
const TOKEN = '0x77f5e148a71be22cf4f3a1816626b240547b6302';

function job(range: string[]): string {
  const file = join(tmp.dir, `job-${range.join('').length}.yaml`);
  writeFileSync(
    file,
    [
      'name: plan-readable',
      'source:',
      '  base_url: sandbox',
      '  chains: [1]',
      'targets:',
      `  - contract: "${TOKEN}"`,
      '    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]',
      'range:',
      ...range,
      'output:',
      `  destination: ${join(tmp.dir, 'out')}`,
      '',
    ].join('\n'),
  );
  return file;
}

it('time windows as ISO 8601 UTC dates and units by event name, short address and chain; --json keeps full keys', async () => {
  const file = job(['  from: "2024-02-01"', '  to: "2024-02-03"', '  chunk: 1d']);
  const res = await runCli(['plan', file, '--log-level', 'silent']);
  expect(res.code).toBe(0);
  expect(res.stdout).toContain('events Transfer 0x77f5…6302 chain 1: to export [2024-02-01T00:00:00Z, 2024-02-03T00:00:00Z)');
  expect(res.stdout).toContain('    events Transfer 0x77f5…6302 chain 1 [2024-02-02T00:00:00Z, 2024-02-03T00:00:00Z)');
  expect(res.stdout).not.toMatch(/\b1706\d{6}\b/); // no unix seconds
  expect(res.stdout).not.toMatch(/0x[0-9a-f]{64}/); // no topic0 / 66-character keys

  const json = await runCli(['plan', file, '--json', '--log-level', 'silent']);
  const out = JSON.parse(json.stdout) as { plan: { units: { unitKey: string; window: { start: number } }[] } };
  expect(out.plan.units[0]!.unitKey).toMatch(new RegExp(`^events/${TOKEN}_0xddf252ad[0-9a-f]{56}/1/time$`));
  expect(out.plan.units[0]!.window.start).toBe(Date.UTC(2024, 1, 1) / 1000);
}, 60_000);

it('block windows as block numbers', async () => {
  const file = job(['  from: 19000000', '  to: 19002000', '  chunk: 1000']);
  const res = await runCli(['plan', file, '--log-level', 'silent']);
  expect(res.code).toBe(0);
  expect(res.stdout).toContain('    events Transfer 0x77f5…6302 chain 1 blocks [19000000, 19001000)');
  expect(res.stdout).not.toMatch(/0x[0-9a-f]{64}/);
}, 60_000);
