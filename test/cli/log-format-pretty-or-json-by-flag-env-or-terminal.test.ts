/**
 * Issue 14.9: logs are pretty for people or JSON lines for collectors: --log-format, else
 * INSIGHT_EXPORT_LOG_FORMAT, else pretty on a terminal and JSON otherwise. Pino writes to fd 2
 * itself, so the CLI runs as a child process whose stderr is a pipe (not a terminal).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';

const REPO = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/esm/index.mjs')).href;
const exec = promisify(execFile);
const tmp = useTempDir('log-format-');

const JOB = `name: logs
source: { base_url: sandbox, chains: [1] }
targets: [{ wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869", datasets: [transactions] }]
range: { from: "2024-02-01", to: "2024-02-02", chunk: 1d }
output: { format: ndjson }
`;

async function stderrOf(flags: string[], env: Record<string, string> = {}): Promise<string[]> {
  const file = join(tmp.dir, 'job.yaml');
  await writeFile(file, JOB);
  const { stderr } = await exec(
    process.execPath,
    ['--import', TSX, join(REPO, 'src/cli.ts'), 'run', file, '--dry-run', '--destination', join(tmp.dir, 'out'), ...flags],
    { cwd: tmp.dir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 120_000 },
  );
  return stderr.split('\n').filter((l) => l.trim() !== '');
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

it('--log-format, then INSIGHT_EXPORT_LOG_FORMAT, then JSON off a terminal', { timeout: 240_000 }, async () => {
  const [byDefault, flagPretty, envPretty, flagOverEnv] = await Promise.all([
    stderrOf([]),
    stderrOf(['--log-format', 'pretty']),
    stderrOf([], { INSIGHT_EXPORT_LOG_FORMAT: 'pretty' }),
    stderrOf(['--log-format', 'json'], { INSIGHT_EXPORT_LOG_FORMAT: 'pretty' }),
  ]);
  expect(jsonLines(byDefault), byDefault.join('\n')).toBe(true);
  expect(byDefault.map((l) => (JSON.parse(l) as { msg?: string }).msg)).toContain('dry run: nothing written');
  expect(prettyLines(flagPretty), flagPretty.join('\n')).toBe(true);
  expect(prettyLines(envPretty), envPretty.join('\n')).toBe(true);
  expect(jsonLines(flagOverEnv), flagOverEnv.join('\n')).toBe(true);
});
