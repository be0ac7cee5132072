/**
 * Issue 45 item 4: a run checks what it would refuse later whether or not it has windows to export.
 * Decoding turned off on an Iceberg job whose range is already exported: `run` and `run --dry-run`
 * found nothing to export and exited 0 while `plan` exited 2; the cron stayed green until new data
 * arrived. Both now exit 2 naming the table, as `plan` does, and write nothing. The same for an
 * event whose parameter rename changes the columns of the table the job names: the tables' columns
 * come from the signature, without building a decoder (the start-up test keeps viem out of such runs).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 45, transactions: 1_000 });
const tmp = useTempDir('nothing-to-export-refused-');

const wallets = (decode: boolean) => ({
  name: 'decode-off',
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
  decode,
});

const transfers = (value: string) => {
  const token = sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
  return {
    name: 'renamed-arg',
    source: { base_url: 'sandbox', chains: [1] },
    targets: [
      {
        contract: token.address,
        events: [{ signature: `Transfer(address indexed from, address indexed to, uint256 ${value})`, tables: { events: 'transfers' } }],
      },
    ],
    range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
    output: { format: 'ndjson' },
  };
};

/** Every file at the destination, with a hash of each. */
const hashes = (out: string): Record<string, string> =>
  Object.fromEntries(
    listFiles(out).map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(out, f)))
        .digest('hex'),
    ]),
  );

/** `plan`, `run --dry-run` and `run` of the edited job: each exits 2 with `message`, and the destination stays byte for byte as it was. */
async function expectRefusedByEveryRun(file: string, out: string, flags: string[], message: string, field: string): Promise<void> {
  const base = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, ...flags];
  const before = hashes(out);
  for (const argv of [['plan'], ['run', '--dry-run'], ['run']]) {
    const res = await runCli([...argv, file, ...base, '--log-level', 'silent']);
    expect(res.code, `${argv.join(' ')}: ${res.stdout}${res.stderr}`).toBe(ExitCode.badInput);
    expect(res.stderr).toContain(message);
    expect(res.stderr).toContain(`${file} ${field}`);
  }
  expect(hashes(out)).toEqual(before);
}

describe('a job edited after its range was exported, with nothing left to export', () => {
  it('decoding turned off on an Iceberg job is refused by run and run --dry-run with exit 2, as plan refuses it, and nothing is written', async () => {
    const dir = join(tmp.dir, 'decode');
    const out = join(dir, 'out');
    const first = await exportJob({ job: wallets(true), dir, sandbox, destination: out, flags: { format: 'iceberg' } });
    expect(first.status).toBe('succeeded');
    writeFileSync(join(dir, 'job.yaml'), stringify(wallets(false)));
    await expectRefusedByEveryRun(
      join(dir, 'job.yaml'),
      out,
      ['--format', 'iceberg'],
      'Iceberg table "transactions" cannot take the job\'s columns',
      'targets[0].datasets',
    );
  });

  it("an event parameter renamed in a named table is refused by every run, from the signature's columns", async () => {
    const dir = join(tmp.dir, 'rename');
    const out = join(dir, 'out');
    const first = await exportJob({ job: transfers('value'), dir, sandbox, destination: out });
    expect(first.status).toBe('succeeded');
    expect(first.rows).toBeGreaterThan(0);
    writeFileSync(join(dir, 'job.yaml'), stringify(transfers('amount')));
    await expectRefusedByEveryRun(join(dir, 'job.yaml'), out, [], 'Table "transfers"', 'targets[0].events[0].tables.events');
  });
});
