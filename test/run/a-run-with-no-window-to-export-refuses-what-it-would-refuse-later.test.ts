/**
 * Issue 45 item 4: a run checks what it would refuse later whether or not it has windows to export.
 * Decoding turned off on an Iceberg job whose range is already exported: `run` and `run --dry-run`
 * found nothing to export and exited 0 while `plan` exited 2; the cron stayed green until new data
 * arrived. Both now exit 2 naming the table, as `plan` does, and write nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
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

/** The tables (data files, metadata) and the state's table records and manifests, with a hash of each. */
const hashes = (out: string): Record<string, string> =>
  Object.fromEntries(
    listFiles(out)
      .filter((f) => !f.startsWith('_state/') || /^_state\/[^/]+\/(tables|units|segments)\//.test(f))
      .map((f) => [
        f,
        createHash('sha256')
          .update(readFileSync(join(out, f)))
          .digest('hex'),
      ]),
  );

describe('decoding turned off on an Iceberg job with nothing left to export', () => {
  let dir: string;
  let out: string;

  beforeAll(async () => {
    dir = join(tmp.dir, 'job');
    out = join(dir, 'out');
    const first = await exportJob({ job: wallets(true), dir, sandbox, destination: out, flags: { format: 'iceberg' } });
    expect(first.status).toBe('succeeded');
    writeFileSync(join(dir, 'job.yaml'), stringify(wallets(false)));
  });

  it('is refused by run and run --dry-run with exit 2, as plan refuses it, and nothing is written', async () => {
    const file = join(dir, 'job.yaml');
    const flags = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--format', 'iceberg'];
    const before = hashes(out);
    for (const argv of [['plan'], ['run', '--dry-run'], ['run']]) {
      const res = await runCli([...argv, file, ...flags, '--log-level', 'silent']);
      expect(res.code, `${argv.join(' ')}: ${res.stdout}${res.stderr}`).toBe(ExitCode.badInput);
      expect(res.stderr).toContain('Iceberg table "transactions" cannot take the job\'s columns');
      expect(res.stderr).toContain(`${file} targets[0].datasets`);
    }
    expect(hashes(out)).toEqual(before);
  });
});
