/**
 * Issue 45 item 1: a field a log line carries never takes a key of the line itself (time, level,
 * msg, pid, hostname). Before, the `service head` line carried the head block's `time` after the
 * line's own, and a JSON parser kept the block's (a log collector filed the line in 2024).
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, LOG_LINE_KEYS } from '../../src/log.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => string[] } {
  let text = '';
  const destination = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', pretty: false, destination }), lines: () => text.split('\n').filter((l) => l !== '') };
}

/** The top-level keys of a JSON object line, in order, duplicates kept (JSON.parse keeps only the last). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      const end = stringEnd(line, i);
      if (depth === 1 && line[end + 1] === ':') keys.push(JSON.parse(line.slice(i, end + 1)) as string);
      i = end;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

function stringEnd(line: string, start: number): number {
  for (let j = start + 1; j < line.length; j++) {
    if (line[j] === '\\') j++;
    else if (line[j] === '"') return j;
  }
  throw new Error(`unterminated string in ${line}`);
}

/** Every line: no key twice, its time the moment it was written, its level and message the logger's. */
function expectLinesOwnKeys(lines: string[], since: number): void {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    const keys = topLevelKeys(line);
    expect(
      keys.filter((k, i) => keys.indexOf(k) !== i),
      line,
    ).toEqual([]);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(typeof parsed.level, line).toBe('number');
    expect(Date.parse(parsed.time as string), line).toBeGreaterThanOrEqual(since - 1000);
    expect(Date.parse(parsed.time as string), line).toBeLessThanOrEqual(Date.now() + 1000);
  }
}

describe('log lines', () => {
  it('a field named like a key of the line is kept under `fields`, and the line keeps its own', () => {
    const since = Date.now();
    const log = capture();
    const fields = { time: 1707005748, level: 'deep', msg: 'not the message', pid: 7, hostname: 'h', chain: 1 };
    log.logger.info(fields, 'service head');
    log.logger.child({ time: 1, chain: 2 }).warn({ block: 3 }, 'child line');
    const [line, child] = log.lines();
    expectLinesOwnKeys(log.lines(), since);
    expect(JSON.parse(line!)).toMatchObject({
      level: 30,
      msg: 'service head',
      chain: 1,
      fields: { time: 1707005748, level: 'deep', msg: 'not the message', pid: 7, hostname: 'h' },
    });
    expect(JSON.parse(child!)).toMatchObject({ level: 40, msg: 'child line', chain: 2, block: 3, fields: { time: 1 } });
    expect(LOG_LINE_KEYS).toEqual(['time', 'level', 'msg', 'pid', 'hostname']);
  });

  const sandbox = useSandbox({ seed: 42 });
  const tmp = useTempDir('log-keys-');

  it('every line of a run has one time, the moment it was written; the service head line names the block time', async () => {
    const since = Date.now();
    const log = capture();
    const report = await exportJob({
      job: {
        name: 'log-keys',
        source: { chains: [1] },
        targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
        range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
      },
      dir: tmp.dir,
      sandbox,
      destination: `${tmp.dir}/out`,
      logger: log.logger,
    });
    expect(report.status).toBe('succeeded');
    expectLinesOwnKeys(log.lines(), since);
    const head = log
      .lines()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'service head');
    expect(head).toBeDefined();
    expect(typeof head!.block_time).toBe('number');
  }, 60_000);
});
