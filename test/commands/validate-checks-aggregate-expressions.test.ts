import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../datasets/export-helpers.js';
import { runCli } from '../helpers/cli-in-process.js';

const job = (aggregate: string) => `name: agg
source: { base_url: sandbox, chains: [1] }
targets:
  - wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869"
    datasets: [aggregates]
  - contract: "0x77f5e148a71be22cf4f3a1816626b240547b6302"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
    datasets: [aggregates]
aggregates:
  group_by: ["toDate(block_timestamp) as day"]
  aggregate: ["count() as n", "${aggregate}"]
range: { from: "2024-02-01", to: "2024-02-02" }
`;

describe('insight-export validate', () => {
  it('checks aggregates expressions against every target they apply to (exit 2, naming field and target)', async () => {
    const dir = await tempDir();
    const good = path.join(dir, 'good.yaml');
    const bad = path.join(dir, 'bad.yaml');
    await writeFile(good, job('max(block_number) as last_block'));
    await writeFile(bad, job('sum(gas_used) as gas'));
    const ok = await runCli(['validate', good, '--log-level', 'silent']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`ok ${good}`);
    const res = await runCli(['validate', bad, '--log-level', 'silent']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Unknown column "gas_used"');
    expect(res.stderr).toContain(`${bad} aggregates.aggregate[1], applied to targets[1] (events Transfer(`);
  });
});
