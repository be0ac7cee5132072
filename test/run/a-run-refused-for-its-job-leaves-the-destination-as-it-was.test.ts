/**
 * Issue 45 item 6, the run's side: a run refused for its job or the destination's tables writes
 * nothing at the destination. Two targets writing one table name with other columns, or one wallet
 * given by name and by address, were refused by `run` (exit 2) after it had taken the lease (and,
 * with windows done, settled them) and left `_state/<job>/` lease and report files behind. Every
 * such refusal now comes before the lease: the destination is byte for byte as it was, whether it
 * was empty or held an earlier export. The same for a target's changed query whose rows would land
 * beside the old query's in its table, and for another format than the destination holds: both were
 * refused only after the lease (leaving lease.json, last-run.json and a report behind).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 46, transactions: 1_000 });
const tmp = useTempDir('refused-run-writes-nothing-');

const alice = () => sandbox.data.wallets.find((w) => w.name === 'alice.eth')!.address;
const token = () => sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!.address;

const job = (targets: object[], format = 'ndjson') => ({
  name: 'refused',
  source: { base_url: 'sandbox', chains: [1] },
  targets,
  range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
  output: { format },
});
const wallet = () => ({ wallet: alice(), datasets: ['transactions'], tables: { transactions: 'activity' } });
/** The token's transfers sent to the wallet's table: other columns. */
const transfersToo = () => ({
  contract: token(),
  events: [{ signature: 'Transfer(address indexed from, address indexed to, uint256 value)', tables: { events: 'activity' } }],
});
const byName = { wallet: 'alice.eth', datasets: ['nft_holdings'] };

/** Every file at the destination with a hash of its bytes. */
const files = (out: string): Record<string, string> =>
  Object.fromEntries(
    listFiles(out).map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(out, f)))
        .digest('hex'),
    ]),
  );

const START = ['an empty destination', 'a destination holding an earlier export'];

const EDITS = [
  {
    what: 'two targets writing one table name with other columns',
    edited: () => job([wallet(), transfersToo()]),
    error: 'Table "activity" is named for rows with other columns',
    starts: START,
  },
  {
    what: 'one wallet given by address and by name',
    edited: () => job([wallet(), byName]),
    error: 'The wallet "alice.eth" is already targets[0]',
    starts: START,
  },
  {
    what: "decoding turned off for a table's rows, nothing left to export",
    edited: () => ({ ...job([wallet()]), decode: false }),
    error: 'Table "activity" would get other columns than it was first written with',
    starts: START.slice(1),
  },
  {
    what: "the wallet's query changed while its table stays",
    edited: () => job([{ ...wallet(), filters: { filter_gas_gte: 60_000 } }]),
    error: 'Table "activity" would hold rows of two queries of targets[0]',
    starts: START.slice(1),
  },
  {
    what: 'another format than the destination holds',
    edited: () => job([wallet()], 'parquet'),
    error: 'The destination holds ndjson files of job refused; this run would write parquet',
    starts: START.slice(1),
  },
];

describe('a run refused for its job', () => {
  for (const { what, edited, error, starts } of EDITS)
    for (const start of starts)
      it(`(${what}) leaves ${start} byte for byte as it was`, async () => {
        const dir = join(tmp.dir, `${what}-${start}`.replace(/\W+/g, '-'));
        const out = join(dir, 'out');
        if (start !== 'an empty destination') {
          const first = await exportJob({ job: job([wallet()]), dir, sandbox, destination: out });
          expect(first.status).toBe('succeeded');
          expect(first.rows).toBeGreaterThan(0);
        }
        mkdirSync(dir, { recursive: true });
        const file = join(dir, 'job.yaml');
        writeFileSync(file, stringify(edited()));
        const before = files(out);
        const flags = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--log-level', 'silent'];
        for (const argv of [['run', '--dry-run'], ['run']]) {
          const res = await runCli([...argv, file, ...flags]);
          expect(res.code, `${argv.join(' ')}: ${res.stdout}${res.stderr}`).toBe(ExitCode.badInput);
          expect(res.stderr).toContain(error);
          expect(files(out), argv.join(' ')).toEqual(before);
        }
      });
});
