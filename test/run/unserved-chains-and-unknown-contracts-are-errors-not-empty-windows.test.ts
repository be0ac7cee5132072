/**
 * Issue 14.1: a chain the service does not serve, or a contract it has never seen, answers every
 * list request with an empty page. A run must not record those windows as done with 0 rows: it
 * ends with a typed bad-input error (exit 2) before writing any window, and a unit that exported
 * no row at all is named in the report.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode, InsightExportError } from '../../src/errors.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('unserved-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

function alice() {
  return sandbox.data.wallets[0]!.address;
}

function susd(chainId: number) {
  return sandbox.data.contracts.find((c) => c.symbol === 'SUSD' && c.chainId === chainId)!.address;
}

async function failure(name: string, job: Record<string, unknown>): Promise<{ err: InsightExportError; out: string }> {
  const out = join(tmp.dir, name, 'out');
  const err = await exportJob({ job: { name, ...job }, dir: join(tmp.dir, name), sandbox, destination: out }).then(
    (r) => {
      throw new Error(`the run did not fail: ${r.status}, ${r.rows} rows, ${r.windows.done} windows done`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InsightExportError);
  return { err: err as InsightExportError, out };
}

/** Completed window markers and unit manifests under a destination. */
function completedMarkers(out: string, job: string): string[] {
  return ['completed', 'units'].flatMap((folder) => {
    const dir = join(out, '_state', job, folder);
    return existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json')) : [];
  });
}

describe('a chain the service does not serve', () => {
  for (const range of [
    { by: 'time', from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    { by: 'block', from: 19_130_000, to: 19_140_000, chunk: 5000 },
    { by: 'block', from: 19_130_000, to: 'latest', chunk: 5000 },
  ]) {
    it(`is refused with exit 2 and no window recorded (range by ${range.by}, to ${range.to})`, async () => {
      const name = `unserved-${range.by}-${range.to}`;
      const { err, out } = await failure(name, {
        source: { base_url: 'sandbox', chains: [999_999] },
        targets: [{ wallet: alice(), datasets: ['transactions'] }],
        range,
      });
      expect(err.exitCode).toBe(ExitCode.badInput);
      expect(err.message).toContain('chain 999999');
      expect(err.hint).toMatch(/chain id/);
      expect(completedMarkers(out, name)).toEqual([]);
    });
  }

  it('is refused even when another chain of the job is served', async () => {
    const { err, out } = await failure('one-unserved', {
      source: { base_url: 'sandbox', chains: [1, 999_999] },
      targets: [{ wallet: alice(), datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    });
    expect(err.exitCode).toBe(ExitCode.badInput);
    expect(completedMarkers(out, 'one-unserved')).toEqual([]);
  });
});

describe('a contract the service has never seen on a chain', () => {
  for (const to of ['2024-02-03', 'latest']) {
    it(`is refused with exit 2, naming the contract and the chain (to ${to})`, async () => {
      const unknown = '0x00000000000000000000000000000000deadbeef';
      const name = `unknown-contract-${to}`;
      const { err, out } = await failure(name, {
        source: { base_url: 'sandbox', chains: [1] },
        targets: [{ contract: unknown, events: [TRANSFER] }],
        range: { from: '2024-02-01', to, chunk: '1d' },
      });
      expect(err.exitCode).toBe(ExitCode.badInput);
      expect(err.message).toContain(unknown);
      expect(err.message).toContain('chain 1');
      expect(completedMarkers(out, name)).toEqual([]);
    });
  }

  it('is refused on the chain where it is not deployed (same address, wrong chain)', async () => {
    const { err } = await failure('wrong-chain', {
      source: { base_url: 'sandbox', chains: [8453] },
      targets: [{ contract: susd(1), events: [TRANSFER] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    });
    expect(err.exitCode).toBe(ExitCode.badInput);
    expect(err.message).toContain('chain 8453');
  });
});

describe('a known target without rows in the range', () => {
  it('succeeds and the report names the unit that has no row at all', async () => {
    const report = await exportJob({
      job: {
        name: 'quiet',
        source: { base_url: 'sandbox', chains: [1] },
        targets: [{ contract: susd(1), events: ['Paused(address account)', TRANSFER] }],
        range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      },
      dir: join(tmp.dir, 'quiet'),
      sandbox,
      destination: join(tmp.dir, 'quiet', 'out'),
    });
    expect(report.status).toBe('succeeded');
    expect(report.rows).toBeGreaterThan(0);
    expect(report.empty_units).toHaveLength(1);
    expect(report.empty_units![0]!.startsWith(`events/${susd(1)}_0x62e78cea`)).toBe(true);
  });
});
