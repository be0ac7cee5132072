/**
 * The demo job as shipped (jobs/demo.yaml: the wallet written as `alice.eth`) against a sandbox
 * with every behaviour of the real service on (--profile indexer): its resolve takes no names, so
 * the name becomes the address the wallets route answers (meta.address); its records, envelopes
 * and errors differ from the contract's. The export is the one the contract profile gives.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportJob, listFiles } from '../datasets/export-helpers.js';
import { profileOptions } from '@insight-export/sandbox';
import { useSandbox } from '../helpers/sandbox.js';

const DEMO = resolve(import.meta.dirname, '../../jobs/demo.yaml');
const indexer = useSandbox(profileOptions('indexer'));
const contract = useSandbox({});

describe('the demo job under --profile indexer', () => {
  it('resolves alice.eth through the wallets route and exports exactly the rows of the contract profile', async () => {
    const yaml = await readFile(DEMO, 'utf8');
    expect(yaml).toMatch(/wallet: alice\.eth/);
    const alice = indexer.data.wallet('alice.eth')!.address;
    const resolveAnswer = await fetch(`${indexer.url}/resolve/alice.eth`);
    expect(resolveAnswer.status).toBe(400); // the real indexer's resolve takes no names

    indexer.resetStats();
    const real = await exportJob(indexer, yaml);
    expect(real.report.status).toBe('succeeded');
    expect(indexer.stats().byStatus[400]).toBe(1);
    const expected = await exportJob(contract, yaml);
    expect(expected.report.status).toBe('succeeded');

    expect(real.files).toEqual(expected.files);
    const rows = await real.rows();
    expect(rows.length).toBeGreaterThan(100);
    expect(rows).toEqual(await expected.rows());
    const txs = await real.rows('transactions/');
    expect(txs.length).toBeGreaterThan(50);
    expect(txs.every((r) => r.wallet_address === alice)).toBe(true);
    // The rows that differ on the wire: creations, plain transfers, legacy fees.
    expect(txs.some((r) => r.function_selector === null)).toBe(true);
    expect(txs.some((r) => r.transaction_type < 2 && r.max_fee_per_gas === null)).toBe(true);

    const state = (await listFiles(real.dir)).filter((f) => f.startsWith('_state/') && f.includes('/units/'));
    for (const key of [...real.files, ...state.filter((f) => f.includes('transactions'))]) {
      expect(key).not.toContain('alice');
    }
    expect(state.some((f) => f.includes(alice))).toBe(true);
    expect(join(real.dir)).not.toBe(join(expected.dir));
  });
});
