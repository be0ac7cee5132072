/**
 * A run that exports nothing leaves no claim on the partitions: a job whose range lies before the
 * chain's data exits 2 saying so (not "check the chain id"), writes no claim, and the same job
 * renamed then runs. A claim left behind (a run killed before it exported anything) is freed by
 * `release <job file> --name <old name>`; a job with exported windows keeps its claims. The
 * owner-conflict hint's layout is one `ddl` reads.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { jobStreams } from '../../src/plan/streams.js';
import { loadJob } from '../../src/job/index.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { claimPartitions, OWNERS_ROOT } from '../../src/state/owners.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 3_000 });
const tmp = useTempDir('claims-');

async function jobFile(dir: string, name: string, range: Record<string, unknown>, output: Record<string, unknown> = {}) {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    stringify({
      name,
      source: { base_url: sandbox.url, chains: [1] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { chunk: '1d', ...range },
      output: { destination: join(dir, 'out'), format: 'ndjson', ...output },
    }),
  );
  return file;
}

const run = (file: string, ...more: string[]) => runCli(['run', file, '--log-level', 'silent', ...more]);

async function claimFiles(out: string): Promise<string[]> {
  const root = join(out, OWNERS_ROOT);
  if (!existsSync(root)) return [];
  return (await readdir(root, { recursive: true })).filter((f) => f.endsWith('.json')).sort();
}

describe('claims', () => {
  it('a range before the chain data: exit 2 saying the chain is served but not in the range, no claim; renamed, the job runs', async () => {
    const dir = join(tmp.dir, 'early');
    const early = await run(await jobFile(dir, 'm6', { from: '2020-01-01', to: '2020-01-03' }));
    expect(early.stderr).toMatch(/^error: The service has blocks on chain 1, but none in or before this job's range/m);
    expect(early.stderr).toMatch(/Hint: The chain id is right/);
    expect(early.stderr).not.toMatch(/Check the chain id/);
    expect(early.code).toBe(2);
    expect(await claimFiles(join(dir, 'out'))).toEqual([]);

    const fixed = await run(await jobFile(dir, 'm7', { from: '2024-02-01', to: '2024-02-03' }));
    expect(fixed.stderr).not.toMatch(/Another job/);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect((await claimFiles(join(dir, 'out'))).every((f) => f.endsWith('/m7.json'))).toBe(true);
  });

  it('a run whose every window fails (a group_by the service refuses) withdraws the claims it wrote', async () => {
    const dir = join(tmp.dir, 'refused');
    const file = join(dir, 'agg.yaml');
    await mkdir(dir, { recursive: true });
    await writeFile(
      file,
      stringify({
        name: 'agg',
        source: { base_url: sandbox.url, chains: [1] },
        targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['aggregates'] }],
        aggregates: { group_by: ['toStartOfWeek(block_timestamp) as week'], aggregate: ['count() as n'] },
        range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
        output: { destination: join(dir, 'out'), format: 'ndjson' },
      }),
    );
    const r = await run(file);
    expect(r.stdout).toMatch(/FAILED .*HTTP 400/);
    expect(r.code).toBe(2);
    expect(await claimFiles(join(dir, 'out'))).toEqual([]);
  });

  it('a chain the service does not serve still says so', async () => {
    const dir = join(tmp.dir, 'unserved');
    const file = await jobFile(dir, 'x', { from: '2024-02-01', to: '2024-02-02' });
    const text = await readFile(file, 'utf8');
    expect(text).toContain('chains:\n    - 1\n');
    await writeFile(file, text.replace('chains:\n    - 1\n', 'chains:\n    - 777777\n'));
    const r = await run(file);
    expect(r.stderr).toMatch(/^error: The service has no block on chain 777777/m);
    expect(r.code).toBe(2);
  });

  it('a claim left behind is released by `release --name`; a job with exported windows keeps its claims', async () => {
    const dir = join(tmp.dir, 'left');
    const out = join(dir, 'out');
    const range = { from: '2024-02-01', to: '2024-02-03' };
    // As a run killed after claiming and before exporting leaves it.
    const old = await loadJob(await jobFile(dir, 'old', range));
    const store = await openStore(out, {});
    await claimPartitions(store, 'old', DEFAULT_PARTITIONING, jobStreams(old));
    await store.close?.();

    const renamed = await jobFile(dir, 'new', range);
    const refused = await run(renamed);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/Another job already exports these partitions .*: old/);
    expect(refused.stderr).toContain(`insight-export release <this job file> --name old`);

    const released = await runCli(['release', renamed, '--name', 'old', '--log-level', 'silent']);
    expect(released.stdout).toMatch(/^released 1 partition claim of job old at /);
    expect(released.code, released.stderr).toBe(0);
    expect(await claimFiles(out)).toEqual([]);
    const ran = await run(renamed);
    expect(ran.code, ran.stderr).toBe(0);

    // "new" has exported windows now: its claims stay unless --force.
    const kept = await runCli(['release', renamed, '--log-level', 'silent']);
    expect(kept.stderr).toMatch(/^error: Job new has exported windows at .*: its claims stay/m);
    expect(kept.code).toBe(2);
    expect((await claimFiles(out)).length).toBe(1);
  });

  it("the owner-conflict hint's layout is one ddl reads, and the second job runs with it", async () => {
    const dir = join(tmp.dir, 'hint');
    const range = { from: '2024-02-01', to: '2024-02-02' };
    expect((await run(await jobFile(dir, 'first', range))).code).toBe(0);
    const refused = await run(await jobFile(dir, 'second', range));
    expect(refused.code).toBe(2);
    const layout = /output\.partitioning "([^"]+)"/.exec(refused.stderr)?.[1];
    expect(layout).toBeDefined();
    const second = await jobFile(dir, 'second', range, { partitioning: layout });
    const ran = await run(second);
    expect(ran.code, ran.stderr).toBe(0);
    const ddl = await runCli(['ddl', second, '--dialect', 'duckdb', '--log-level', 'silent']);
    expect(ddl.stderr).toBe('');
    expect(ddl.code).toBe(0);
    expect(ddl.stdout).toMatch(/job/);
  });
});
