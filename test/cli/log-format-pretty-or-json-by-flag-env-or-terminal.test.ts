/**
 * Issue 14.9: logs are pretty for people or JSON lines for collectors: --log-format, else
 * INSIGHT_EXPORT_LOG_FORMAT, else pretty on a terminal and JSON otherwise. Pino writes to fd 2
 * itself (a synchronous destination): the CLI runs in-process with those writes captured
 * (test/helpers/cli-in-process.ts, logs) and stderr shown as a pipe is (no isTTY), as it was for
 * the child processes this test ran before (~0.5 s of start-up each).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('log-format-');

const JOB = `name: logs
source: { base_url: sandbox, chains: [1] }
targets: [{ wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869", datasets: [transactions] }]
range: { from: "2024-02-01", to: "2024-02-02", chunk: 1d }
output: { format: ndjson }
`;

/** What the test changes of the process, put back after each test. */
const ENV_KEYS = ['INSIGHT_EXPORT_LOG_FORMAT', 'INSIGHT_EXPORT_LOG_LEVEL'] as const;
let saved: { env: Record<string, string | undefined>; isTTY: boolean | undefined };
beforeEach(() => {
  saved = { env: Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]])), isTTY: process.stderr.isTTY };
  for (const k of ENV_KEYS) delete process.env[k];
  // A pipe, as a collector's stderr is: not a terminal.
  process.stderr.isTTY = undefined as unknown as boolean;
});
afterEach(() => {
  for (const k of ENV_KEYS) {
    if (saved.env[k] === undefined) delete process.env[k];
    else process.env[k] = saved.env[k];
  }
  process.stderr.isTTY = saved.isTTY as boolean;
});

async function stderrOf(flags: string[], env: Record<string, string> = {}): Promise<string[]> {
  const file = join(tmp.dir, 'job.yaml');
  await writeFile(file, JOB);
  Object.assign(process.env, env);
  try {
    const r = await runCli(['run', file, '--dry-run', '--destination', join(tmp.dir, 'out'), ...flags], { logs: true });
    expect(r.code, r.stderr).toBe(0);
    return r.stderr.split('\n').filter((l) => l.trim() !== '');
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
  }
}

const isJson = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};
const jsonLines = (lines: string[]) => lines.length > 0 && lines.every(isJson);
const prettyLines = (lines: string[]) => lines.some((l) => /INFO.*dry run: nothing written/.test(l)) && !lines.some(isJson);

it('--log-format, then INSIGHT_EXPORT_LOG_FORMAT, then JSON off a terminal', { timeout: 120_000 }, async () => {
  // One at a time: the environment and the captured writes are the process's own.
  const byDefault = await stderrOf([]);
  const flagPretty = await stderrOf(['--log-format', 'pretty']);
  const envPretty = await stderrOf([], { INSIGHT_EXPORT_LOG_FORMAT: 'pretty' });
  const flagOverEnv = await stderrOf(['--log-format', 'json'], { INSIGHT_EXPORT_LOG_FORMAT: 'pretty' });
  expect(jsonLines(byDefault), byDefault.join('\n')).toBe(true);
  expect(byDefault.map((l) => (JSON.parse(l) as { msg?: string }).msg)).toContain('dry run: nothing written');
  expect(prettyLines(flagPretty), flagPretty.join('\n')).toBe(true);
  expect(prettyLines(envPretty), envPretty.join('\n')).toBe(true);
  expect(jsonLines(flagOverEnv), flagOverEnv.join('\n')).toBe(true);
});
