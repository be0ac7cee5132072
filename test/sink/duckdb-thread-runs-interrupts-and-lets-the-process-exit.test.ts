import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBThread } from '../../src/sink/duckdb-thread.js';
import { useTempDir } from '../helpers/temp-dir.js';

const REPO = join(import.meta.dirname, '../..');
const CONFIG = { config: { threads: '1', memory_limit: '256MB' } };
const tmp = useTempDir('sink-duckdb-thread-');
const thread = new DuckDBThread(CONFIG);
afterAll(() => thread.close());

describe('the DuckDB thread', () => {
  it('runs statements in the order sent, each seeing what the one before wrote', async () => {
    const file = join(tmp.dir, 'numbers.parquet');
    const written = thread.run(`COPY (SELECT range AS n FROM range(1000)) TO '${file}' (FORMAT parquet)`);
    const copied = thread.run(`COPY (SELECT sum(n) AS total FROM '${file}') TO '${join(tmp.dir, 'total.csv')}' (FORMAT csv)`);
    await Promise.all([written.done, copied.done]);
    expect(readFileSync(join(tmp.dir, 'total.csv'), 'utf8')).toBe('total\n499500\n');
  });

  it("rejects with DuckDB's own message, and runs the next statement", async () => {
    await expect(thread.run('SELECT * FROM no_such_table').done).rejects.toThrow(/no_such_table/);
    await expect(thread.run('SELECT 1').done).resolves.toBeUndefined();
  });

  it('stops a long statement when interrupted', async () => {
    const long = thread.run('SELECT count(*) FROM range(1000000000000) a');
    setTimeout(() => long.interrupt(), 200);
    const started = performance.now();
    await expect(long.done).rejects.toThrow(/interrupt/i);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('rejects statements once closed', async () => {
    const closed = new DuckDBThread(CONFIG);
    await closed.run('SELECT 1').done;
    await closed.close();
    await expect(closed.run('SELECT 1').done).rejects.toThrow(/closed/);
  });

  it('does not keep an idle process alive, and keeps one with a statement in flight', async () => {
    const script = [
      `import { DuckDBThread } from ${JSON.stringify(join(REPO, 'src/sink/duckdb-thread.ts'))};`,
      `const thread = new DuckDBThread(${JSON.stringify(CONFIG)});`,
      // Nothing but the statement keeps this process alive while it runs.
      `thread.run("COPY (SELECT count(*) AS n FROM range(200000000)) TO '${join(tmp.dir, 'count.csv')}' (FORMAT csv)").done.then(() => console.log('done'));`,
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO,
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe('done');
  });
});
