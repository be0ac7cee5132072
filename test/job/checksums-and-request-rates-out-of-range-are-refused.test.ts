/**
 * Issue 14.10: a mixed-case address whose EIP-55 checksum does not match is a typo and is refused
 * (lowercase and correctly checksummed addresses pass), in job files and in read commands; a
 * request budget far outside any sensible range (1e-9 per second) is refused with the range.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('checksum-');
const GOOD = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
// The same address with one letter's case flipped: same digits, checksum broken.
const BAD = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045'.replace('aF9D', 'af9D');

async function job(name: string, fields: Record<string, unknown>): Promise<string> {
  const file = join(tmp.dir, `${name}.yaml`);
  await writeFile(
    file,
    stringify({
      name,
      source: { base_url: 'sandbox', chains: [1] },
      range: { from: '2024-02-01', to: '2024-02-02' },
      output: { destination: join(tmp.dir, name) },
      ...fields,
    }),
  );
  return file;
}

describe('EIP-55 checksums', () => {
  it('a wrong checksum in a job file is refused with file:line and the checksummed form', async () => {
    const file = await job('bad', { targets: [{ wallet: BAD }] });
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:`);
    expect(r.stderr).toMatch(/targets\[0\]\.wallet: .* has a wrong EIP-55 checksum/);
    expect(r.stderr).toContain(GOOD);
  });

  it('lowercase, uppercase and correct checksums pass', async () => {
    for (const [i, wallet] of [GOOD, GOOD.toLowerCase(), `0x${GOOD.slice(2).toUpperCase()}`].entries()) {
      // --offline: the checksum is what is tested; the sandbox has no row of this wallet, so the service finds no block to check chain 1 by and run refuses it.
      const r = await runCli(['validate', '--offline', await job(`ok-${i}`, { targets: [{ wallet }] })]);
      expect(r.code, r.stderr).toBe(0);
    }
  });

  it('a read command refuses a wrong checksum before sending anything', async () => {
    const r = await runCli(['nfts', BAD, '--chain', '1', '--base-url', 'http://127.0.0.1:9/insights/v1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/EIP-55 checksum/);
  });
});

describe('the request budget', () => {
  it('--requests-per-second 1e-9 is refused with the accepted range', async () => {
    const r = await runCli(['run', await job('rps-flag', { targets: [{ wallet: GOOD }] }), '--requests-per-second', '1e-9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--requests-per-second.*must be 0 \(unlimited\) or from 0\.01 to 100000/);
  });

  it('concurrency.requests_per_second: 1e-9 in a job file is refused with the range', async () => {
    const r = await runCli([
      'validate',
      await job('rps-file', { targets: [{ wallet: GOOD }], concurrency: { requests_per_second: 1e-9 } }),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/concurrency\.requests_per_second: .*must be 0 \(unlimited\) or from 0\.01 to 100000/);
  });
});
