/**
 * A flag typo (`--destinaton`) is refused with exit 2 before anything runs, and the hint names the
 * flag meant (`--destination`), for the command's own flags and the settings' alike; a flag near
 * no known one gets no guess.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';

const DEMO = join(import.meta.dirname, '../../jobs/demo.yaml');

it.each([
  ['run', [DEMO, '--destinaton', '/tmp/x', '--dry-run'], 'destinaton', 'destination'],
  ['plan', [DEMO, '--requests-per-secnd', '5'], 'requests-per-secnd', 'requests-per-second'],
  ['run', [DEMO, '--dryrun'], 'dryrun', 'dry-run'],
  ['verify', [DEMO, '--chain-hash'], 'chain-hash', 'chain-hashes'],
])('%s %j: exit 2, "did you mean"', async (command, args, typo, meant) => {
  const r = await runCli([command, ...args]);
  expect(r.stderr).toMatch(new RegExp(`^error: Unknown argument: ${typo}$`, 'm'));
  expect(r.stderr).toContain(`Hint: --${typo}: did you mean --${meant}?`);
  expect(r.code).toBe(2);
});

it('a flag near no known one: exit 2, no guess', async () => {
  const r = await runCli(['run', DEMO, '--xyzzy', '1']);
  expect(r.stderr).toMatch(/^error: Unknown argument: xyzzy$/m);
  expect(r.stderr).not.toMatch(/did you mean/);
  expect(r.code).toBe(2);
});
