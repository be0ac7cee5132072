/**
 * Issue 45 item 6: `validate` finds every problem `run` would refuse before any request. A chain the
 * service does not serve and a contract it does not know on a chain passed `validate` (exit 0) and
 * were refused by `run` (exit 2). `validate` now asks the service as `run` does (about a request
 * per chain and one per contract and chain) and refuses them alike; `--offline` sends no request
 * and says, in a warning, what it did not check. (`run` refuses both whether or not it has windows to
 * export: it asks the service for its heads or whether its range is served at every run that is not
 * complete, and those checks come first.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const UNKNOWN = '0x00000000000000000000000000000000000000aa';
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const tmp = useTempDir('validate-service-');

function jobFile(name: string, chains: string, targets: string[]): string {
  const file = join(tmp.dir, `${name}.yaml`);
  const lines = [`name: ${name}`, 'source:', '  base_url: sandbox', `  chains: ${chains}`, 'targets:', ...targets];
  writeFileSync(
    file,
    [...lines, 'range: {from: "2024-02-01", to: "2024-02-02"}', `output: {destination: ${join(tmp.dir, 'out')}}`, ''].join('\n'),
  );
  return file;
}

const CASES = [
  {
    what: 'a chain the service does not serve',
    file: () => jobFile('unserved', '[999999]', [`  - wallet: ${ALICE}`]),
    error: 'The service has no block on chain 999999',
  },
  {
    what: 'a contract the service does not know on the chain',
    file: () => jobFile('unknown-contract', '[1]', [`  - contract: "${UNKNOWN}"`, `    events: ["${TRANSFER}"]`]),
    error: `The service knows no contract ${UNKNOWN} on chain 1`,
  },
];

describe('validate checks at the service what run refuses', () => {
  for (const { what, file, error } of CASES)
    it(`refuses ${what} as run does (test/run/unserved-chains-and-unknown-contracts-are-errors-not-empty-windows.test.ts); --offline warns it did not check`, async () => {
      const f = file();
      const v = await runCli(['validate', f]);
      expect(v.code, v.stdout + v.stderr).toBe(ExitCode.badInput);
      expect(v.stderr).toContain(error);
      const offline = await runCli(['validate', '--offline', '--json', f]);
      expect(offline.code).toBe(0);
      const [verdict] = JSON.parse(offline.stdout) as { warnings: { field: string; message: string }[] }[];
      expect(verdict!.warnings).toEqual([
        expect.objectContaining({ field: 'source.chains', message: expect.stringContaining('not checked (--offline)') as unknown }),
      ]);
    });

  it('passes a job whose chains and contracts the service knows', async () => {
    const v = await runCli(['validate', jobFile('known', '[1]', [`  - wallet: ${ALICE}`])]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});
