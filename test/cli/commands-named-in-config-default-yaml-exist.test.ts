/**
 * Issue 14.9: config/default.yaml tells users to run `insight-export <command>`: each command it
 * names exists, and `config` prints the resolved settings with where each came from.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { commands } from '../../src/commands/index.js';
import { runCli } from '../helpers/cli-in-process.js';

const REPO = resolve(import.meta.dirname, '../..');
const text = readFileSync(join(REPO, 'config', 'default.yaml'), 'utf8');

it('every `insight-export <command>` in config/default.yaml is a command', async () => {
  const named = [...text.matchAll(/`insight-export (\w+)/g)].map((m) => m[1]!);
  expect(named.length).toBeGreaterThan(0);
  const known = (await commands(() => undefined)).map((c) => String(c.command).split(' ')[0]);
  for (const command of named) expect(known, command).toContain(command);
});

it('config jobs/demo.yaml prints each setting and its origin', async () => {
  const r = await runCli(['config', join(REPO, 'jobs', 'demo.yaml'), '--format', 'ndjson']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/source\.base_url\s+sandbox\s+\[job /);
  expect(r.stdout).toMatch(/output\.format\s+ndjson\s+\[flag --format\]/);
});
