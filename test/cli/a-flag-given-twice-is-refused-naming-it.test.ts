/**
 * A flag that takes one value, given twice, is bad input naming the flag (exit 2), for every
 * command and every such flag: the command's own (`--shard`, which a fuzzed run turned into an
 * internal error) and the settings' (`--format`). Flags declared to repeat (`--chain`) still do.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('flag-twice-');
const DEMO = join(import.meta.dirname, '../../jobs/demo.yaml');

it.each([
  ['run', [DEMO, '--shard', '{}', '--shard', '9007199254740992', '--dry-run'], '--shard'],
  ['run', [DEMO, '--format', 'ndjson', '--format', 'parquet', '--dry-run'], '--format'],
  ['verify', [DEMO, '--chain-hashes-sample', '2', '--chain-hashes-sample', '3'], '--chain-hashes-sample'],
  ['plan', [DEMO, '--shard', '0/2', '--shard', '1/2'], '--shard'],
])('%s %j: exit 2 naming the flag', async (command, args, flag) => {
  const r = await runCli([command, ...args, '--destination', join(tmp.dir, 'out'), '--log-level', 'silent']);
  expect(r.stderr).not.toMatch(/internal error|\n\s+at \S+ \(/);
  expect(r.stderr).toContain(`${flag} is given 2 times: it takes one value`);
  expect(r.code).toBe(2);
});

it('a flag declared to repeat still repeats: resolve --chain 1 --chain 8453', async () => {
  const r = await runCli(['resolve', 'alice.eth', '--chain', '1', '--chain', '8453', '--base-url', 'sandbox', '--log-level', 'silent']);
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/chains:\s+1, 8453/);
  expect(r.code).toBe(0);
});
