/**
 * Issue 45.8: the sandbox's banner named only the hot wallet, and `--transactions 300000` changes
 * every contract address (the README's SUSD address then returns nothing). The banner
 * (sandboxBanner, what `insight-export sandbox` prints under its URLs) names every ERC-20 contract
 * of the data set served, per chain; a job written with the address it prints exports rows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { sandboxBanner } from '@insight-export/sandbox';
import { runCli } from '../helpers/cli-in-process.js';
import { withSandbox } from '../helpers/knob-sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('banner-');
const DEMO_SUSD_ON_1 = '0x77f5e148a71be22cf4f3a1816626b240547b6302';

it('names every ERC-20 contract of the data set served; a job with the SUSD it prints exports rows', async () => {
  await withSandbox({ transactions: 6_000, seed: 42 }, async (s) => {
    const banner = sandboxBanner(s.data).join('');
    for (const c of s.data.contracts.filter((k) => k.kind === 'erc20')) expect(banner).toContain(`on chain ${c.chainId}: ${c.address}`);
    const susd = /# contract SUSD \(ERC-20, Transfer events\) on chain 1: (0x[0-9a-f]{40})/.exec(banner)?.[1];
    // Another data set than the demo's: its SUSD is elsewhere.
    expect(susd).toBeDefined();
    expect(susd).not.toBe(DEMO_SUSD_ON_1);
    const file = join(tmp.dir, 'susd.yaml');
    writeFileSync(
      file,
      `name: susd
source:
  chains: [1]
targets:
  - contract: "${susd}"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
range:
  from: "2024-02-01"
  to: "2024-02-03"
  chunk: 1d
output:
  format: ndjson
  destination: ${join(tmp.dir, 'out')}
`,
    );
    const r = await runCli(['run', file, '--base-url', s.url, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rows).toBeGreaterThan(0);
  });
}, 60_000);
