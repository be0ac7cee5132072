/**
 * `verify --chain-hashes` asks the service whether every window's recorded edge block and its
 * rows' block hashes are still the chain's: clean after an export; after the sandbox reorganises
 * the last 3,000 blocks of a chain it exits 1 and names the windows of that chain (also with a
 * sample of blocks per window, which then asks blocks of rows of every window); after the next run repaired them it is clean again. The rows are
 * read from NDJSON and from Parquet files alike.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { VerifyReport } from '../../src/state/verify.js';
import type { ChainHashReport } from '../../src/state/verify-chain-hashes.js';
import { reorganise } from '@insight-export/sandbox';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { runCli } from '../helpers/cli-in-process.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({ transactions: 40_000 });
const tmp = useTempDir('verify-hashes-');
// The runs and verifies run in this process: what is tested is what verify finds, not the process.

type Report = VerifyReport & { chain_hashes: ChainHashReport };

it.each(['ndjson', 'parquet'])(
  'names the windows a reorganisation replaced, and is clean once they are exported again (%s)',
  { timeout: 300_000 },
  async (format) => {
    const dir = join(tmp.dir, format);
    const out = join(dir, 'out');
    const jobFile = await writeJob(dir, {
      name: `verify-hashes-${format}`,
      source: { base_url: sandbox.url, chains: [1, 8453] },
      targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-03', to: 'latest', safety_lag: '0s', chunk: '6h' },
      output: { format, destination: out },
    });
    expect((await runCli(['run', jobFile, '--log-level', 'error'])).code).toBe(0);
    const verify = async (...extra: string[]) => {
      const r = await runCli(['verify', jobFile, '--chain-hashes', '--json', '--log-level', 'error', ...extra]);
      return { code: r.code, report: JSON.parse(r.stdout) as Report };
    };
    const clean = await verify();
    expect(clean.code).toBe(0);
    expect(clean.report.chain_hashes.edges_checked).toBe(clean.report.chain_hashes.windows_checked);
    // Matching edges prove their windows' rows: no block of rows is asked.
    expect(clean.report.chain_hashes.row_blocks_checked).toBe(0);
    expect(clean.report.chain_hashes.requests).toBe(clean.report.chain_hashes.requests_planned);

    const summary = reorganise(sandbox.data, 8453, 3000);
    const dirty = await verify();
    expect(dirty.code).toBe(1);
    const named = dirty.report.problems.filter((p) => p.kind === 'chain-hash');
    expect(named.length).toBeGreaterThan(0);
    for (const p of named) expect(p.unit).toMatch(/\/8453\/time$/);
    expect(named.some((p) => p.message.includes(`edge block ${summary.head_block} was`))).toBe(true);
    expect(named.some((p) => /block\(s\) of its rows are no longer the service's/.test(p.message))).toBe(true);
    const sampled = await verify('--chain-hashes-sample', '2');
    expect(sampled.code).toBe(1);
    expect(sampled.report.chain_hashes.row_blocks_checked).toBeGreaterThan(0);

    expect((await runCli(['run', jobFile, '--log-level', 'error'])).code).toBe(0);
    const repaired = await verify();
    expect(repaired.code).toBe(0);
    console.log(
      `[verify] --chain-hashes (${format}): clean export ok (${clean.report.chain_hashes.edges_checked} edges, ${clean.report.chain_hashes.requests} requests); ` +
        `after a 3,000-block reorganisation of chain 8453: exit 1 naming ${named.length} windows; after the next run: exit 0`,
    );
  },
);
