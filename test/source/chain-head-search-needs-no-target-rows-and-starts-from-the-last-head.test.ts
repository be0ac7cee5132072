/**
 * Issue 14.2: `to: latest` finds the chain head with resolve/<n> probes alone: a target without
 * rows does not matter, the head a run found is kept at the destination, and the next run
 * searches upward from it in a few requests.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { findChainHead, type BlockProbe } from '../../src/source/chain-head.js';
import type { BlockRecord } from '../../src/source/records.js';
import { readKnownHeads } from '../../src/state/chain-heads.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

/** A chain whose index holds blocks [first, head]. */
function model(first: number, head: number) {
  const probes: number[] = [];
  const probe: BlockProbe = async (n) => {
    probes.push(n);
    return n >= first && n <= head ? ({ chain_id: 1, block_number: n, block_timestamp: 1_700_000_000 + n } as BlockRecord) : null;
  };
  return { probe, probes };
}

describe('findChainHead', () => {
  it('finds the head of an index that starts at genesis, without hints', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 34 }), async (head) => {
        const m = model(0, head);
        const r = await findChainHead(m.probe, 1);
        expect(r.head.block_number).toBe(head);
        expect(r.requests).toBe(m.probes.length);
        expect(r.requests).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(head + 2)) + 3);
      }),
    );
  });

  it('a block taken from a list row is never the head unless a probe finds it (a row may carry anything)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1_000, max: 2 ** 30 }), fc.integer({ min: 0, max: 2 ** 31 }), async (head, claimed) => {
        const m = model(500, head);
        // The row's block number is made up: 0, past the head, or anywhere; a block number hint follows it.
        const row = async () => ({ block_number: claimed, block_timestamp: 1_700_000_000 });
        const r = await findChainHead(m.probe, 1, [row, head - 400]);
        expect(r.head.block_number).toBe(head);
        expect(r.requests).toBe(m.probes.length);
      }),
    );
  });

  it('from a known head k blocks behind, costs about 2*log2(k) probes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1_000_000, max: 2 ** 34 }), fc.integer({ min: 0, max: 100_000 }), async (known, k) => {
        const m = model(1_000_000, known + k);
        const r = await findChainHead(m.probe, 1, [known]);
        expect(r.head.block_number).toBe(known + k);
        expect(r.requests).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(k + 2)) + 2);
      }),
    );
  });

  it('skips hints that do not exist and uses the next', async () => {
    const m = model(500, 900);
    const r = await findChainHead(m.probe, 1, [5_000, async () => undefined, async () => 600]);
    expect(r.head.block_number).toBe(900);
    expect(m.probes.slice(0, 2)).toEqual([5_000, 600]);
  });
});

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('chain-head-');

describe('a `to: latest` job on a contract without rows yet', () => {
  it('succeeds, keeps the head at the destination, and the next run finds it in a few requests', async () => {
    const base = sandbox.data.chains.find((c) => c.chainId === 8453)!;
    const susd = sandbox.data.contracts.find((c) => c.symbol === 'SUSD' && c.chainId === 8453)!;
    const out = join(tmp.dir, 'out');
    const job = {
      name: 'quiet-latest',
      source: { base_url: 'sandbox', chains: [8453] },
      targets: [{ contract: susd.address, events: ['Paused(address account)'] }],
      range: { by: 'block', from: base.firstBlock, to: 'latest', safety_lag: 10, chunk: 50_000 },
    };
    const first = await exportJob({ job, dir: tmp.dir, sandbox, destination: out });
    expect(first.status).toBe('succeeded');
    expect(first.rows).toBe(0);
    expect(first.windows.done).toBeGreaterThan(0);
    const heads = await readKnownHeads(new LocalStore(out), 'quiet-latest');
    expect(heads['8453']).toEqual({ block: base.headBlock, time: base.headTimestamp });

    const again = await exportJob({ job, dir: tmp.dir, sandbox, destination: out });
    expect(again.status).toBe('succeeded');
    // One resolve of the contract, two probes (the known head exists, the next block does not),
    // and the reorganisation check of the newest window's edge; besides them, the settle step's
    // recount of the windows the first run committed (src/run/settle.ts), counted apart.
    expect(again.settle?.recounted).toBeGreaterThan(0);
    expect(again.requests - again.settle!.requests).toBeLessThanOrEqual(4);
  });
});
