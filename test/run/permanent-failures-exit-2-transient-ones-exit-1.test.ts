/**
 * One exit-code policy for what the service refuses: a query or capability it refuses for good
 * (a 4xx other than 408/429, the wallet aggregates the indexer cannot group) exits 2 at once with
 * the cause and what to do, without retrying each window; a service that keeps failing with 5xx
 * exits 1 (a later run may complete). Driven through the CLI against the sandbox.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSandbox, type Sandbox } from '@insight-export/sandbox';
import { SANDBOX_PROFILES } from '@insight-export/sandbox';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('exit-policy-');
let plain: Sandbox;
let indexer: Sandbox;
beforeAll(async () => {
  [plain, indexer] = await Promise.all([
    startSandbox({ seed: 7, transactions: 2_000 }),
    startSandbox({ seed: 7, transactions: 2_000, ...SANDBOX_PROFILES.indexer }),
  ]);
});
afterAll(async () => {
  await plain?.close();
  await indexer?.close();
});

async function job(name: string, sandbox: Sandbox, body: Record<string, unknown>): Promise<string> {
  const file = join(tmp.dir, `${name}.yaml`);
  await writeFile(
    file,
    stringify({
      name,
      source: { base_url: sandbox.url, chains: [1, 8453, 42161] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['aggregates'] }],
      range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
      output: { destination: join(tmp.dir, name), format: 'ndjson' },
      retries: { max_attempts: 3 },
      ...body,
    }),
  );
  return file;
}

async function run(file: string) {
  const r = await runCli(['run', file, '--json', '--log-level', 'warn']);
  if (!r.stdout.trim().startsWith('{')) throw new Error(`no report (exit ${r.code}): ${r.stderr}`);
  return { ...r, report: JSON.parse(r.stdout) as RunReport };
}

describe('what the service refuses for good exits 2 at once', () => {
  it('a group_by the service rejects with HTTP 400 on every window: exit 2, no retry, the hint says to fix the job', async () => {
    const before = plain.stats().byStatus[400] ?? 0;
    const r = await run(
      await job('week', plain, { aggregates: { group_by: ['toStartOfWeek(block_timestamp) as week'], aggregate: ['count() as n'] } }),
    );
    const report = r.report;
    expect(report.status).toBe('failed');
    expect(report.failed.length).toBeGreaterThan(0);
    for (const f of report.failed) {
      expect(f.error).toMatch(/HTTP 400/);
      expect(f.exit_code).toBe(2);
    }
    expect(r.stderr).not.toMatch(/retrying/);
    expect(report.retries).toBe(0);
    // One refused request per window (its first chain's); none asked again.
    const refused = (plain.stats().byStatus[400] ?? 0) - before;
    expect(refused).toBe(3);
    expect(r.code, r.stderr).toBe(2);
    console.log(
      `[exit] group_by refused with 400: exit ${r.code}, ${report.failed.length} windows failed, ${refused} requests refused, 0 retries`,
    );
  });

  it('wallet aggregates the indexer cannot group: exit 2 after a few requests, and no window blames another chain', async () => {
    const before = indexer.stats().byStatus[500] ?? 0;
    const r = await run(await job('grouped', indexer, { aggregates: { group_by: ['status'], aggregate: ['count() as n'] } }));
    const requests = (indexer.stats().byStatus[500] ?? 0) - before;
    expect(r.report.status).toBe('failed');
    expect(r.report.failed).toHaveLength(9);
    for (const f of r.report.failed) {
      expect(f.error).toMatch(/cannot group aggregates of a wallet/);
      expect(f.exit_code).toBe(2);
      // Windows of 8453 and 42161 were not asked: they say so, never "wallet ..., chain 1" as if it were theirs.
      if (!f.unit.includes('/1/')) expect(f.error).not.toMatch(/chain 1,/);
    }
    expect(r.code, r.stderr).toBe(2);
    // The windows in flight (three at most) each give up after three identical 500s; the rest are not asked.
    expect(requests).toBeLessThanOrEqual(9);
    console.log(
      `[exit] wallet aggregates under the indexer: exit ${r.code}, ${requests} requests answered 500, ${r.report.retries} retries`,
    );
  });
});

describe('what a later run may cure exits 1', () => {
  it('a service answering 503 to every request: exit 1 after the retries', async () => {
    const file = await job('down', plain, {
      targets: [{ wallet: plain.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
    });
    plain.setFaults({ rates: { http503: 1 } });
    try {
      const r = await runCli(['run', file, '--json', '--log-level', 'silent']);
      expect(r.stderr).toMatch(/HTTP 503/);
      expect(r.code, r.stderr).toBe(1);
    } finally {
      plain.setFaults(null);
    }
  });
});

describe('both kinds of failure in one run', () => {
  it('windows failed for good (a refused group_by) and for now (503s): exit 2, since retrying alone cannot complete the run', async () => {
    const token = plain.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
    const file = await job('mixed', plain, {
      source: { base_url: plain.url, chains: [1] },
      targets: [
        { wallet: plain.data.wallets[0]!.address, datasets: ['transactions'] },
        {
          contract: token.address,
          events: ['Transfer(address indexed from, address indexed to, uint256 value)'],
          datasets: ['aggregates'],
        },
      ],
      aggregates: { group_by: ['toStartOfWeek(block_timestamp) as week'], aggregate: ['count() as n'] },
      // By block: the chain checks probe these blocks (resolve), not the wallet's rows (the faulted route).
      range: { by: 'block', from: 19_130_000, to: 19_130_200, chunk: 100 },
      retries: { max_attempts: 2 },
    });
    plain.setFaults({ rates: { http503: 1 }, routes: ['transactions'] });
    try {
      const r = await run(file);
      expect(r.report.error).toBeUndefined();
      const codes = new Set(r.report.failed.map((f) => f.exit_code));
      expect([...codes].sort()).toEqual([1, 2]);
      for (const f of r.report.failed) expect(f.error).toMatch(f.exit_code === 2 ? /HTTP 400/ : /HTTP 503/);
      expect(r.code, r.stderr).toBe(2);
    } finally {
      plain.setFaults(null);
    }
  });
});
