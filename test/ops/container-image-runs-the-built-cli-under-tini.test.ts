/**
 * No Docker engine runs here, so the image is checked as far as it can be without one:
 *  - the Dockerfile: multi-stage, dev dependencies only in the build stage, `--omit=dev` in the
 *    final one, a non-root USER, tini from Debian as PID 1 in front of `insight-export`;
 *  - .dockerignore keeps out what the build does not copy and nothing it does;
 *  - the image's filesystem, rebuilt in a temp folder the way the Dockerfile lays it out
 *    (`npm run build` -> app/dist, app/config, the bin linked to dist/bin/cli.js, the bundled CLI): the CLI runs from
 *    there, finds the packaged config, exports a job;
 *  - under `tini -- insight-export run ...`, a SIGTERM sent to tini reaches the exporter, which
 *    stops with exit code 130, an "interrupted" report and no commit left pending.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RunReport } from '../../src/run/report.js';
import { MALLOC_TUNING } from '../../src/run/malloc-tuning.js';
import { LocalStore } from '../../src/store/local.js';
import { builtDist } from '../helpers/built-package.js';
import { useSandbox } from '../helpers/sandbox.js';
import { baseEnv, listKeys, REPO } from './helpers.js';

interface Stage {
  from: string;
  name: string | null;
  lines: string[];
}

/** Dockerfile instructions (continuations joined), split into stages. */
function stages(text: string): Stage[] {
  const joined = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const out: Stage[] = [];
  for (const line of joined) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) out.push({ from: from[1]!, name: from[2] ?? null, lines: [] });
    else out[out.length - 1]?.lines.push(line);
  }
  return out;
}

describe('Dockerfile and .dockerignore', () => {
  it('builds in one stage and ships production dependencies, a non-root user and tini in front of insight-export', async () => {
    const all = stages(await readFile(join(REPO, 'Dockerfile'), 'utf8'));
    expect(all.length).toBeGreaterThanOrEqual(2);
    const final = all[all.length - 1]!;
    const build = all.find((s) => s.name === 'build');
    expect(build, 'a stage named build').toBeDefined();
    expect(build!.lines.some((l) => /^RUN .*npm (ci|install)(?!.*--omit=dev)/.test(l))).toBe(true);
    expect(build!.lines.some((l) => /^RUN .*npm run build/.test(l))).toBe(true);

    const run = final.lines.filter((l) => l.startsWith('RUN '));
    expect(run.some((l) => /npm (ci|install) .*--omit=dev/.test(l))).toBe(true);
    expect(
      run.some((l) => /npm (ci|install)(?!.*--omit=dev)/.test(l)),
      'no dev dependencies in the final stage',
    ).toBe(false);
    expect(run.some((l) => /npm run build|tsc/.test(l))).toBe(false);
    expect(run.some((l) => /apt-get install .*\btini\b/.test(l))).toBe(true);
    expect(final.lines.some((l) => /^COPY --from=build \/app\/dist \.\/dist$/.test(l))).toBe(true);
    expect(final.lines.some((l) => /^COPY config \.\/config$/.test(l))).toBe(true);

    const users = final.lines.filter((l) => /^USER\s/.test(l)).map((l) => l.split(/\s+/)[1]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users[users.length - 1]);
    const entrypoints = final.lines.filter((l) => l.startsWith('ENTRYPOINT'));
    expect(entrypoints).toHaveLength(1);
    const entry = JSON.parse(entrypoints[0]!.slice('ENTRYPOINT'.length)) as string[];
    expect(entry).toEqual(['/usr/bin/tini', '--', 'insight-export']);

    // The malloc settings the DuckDB engine's memory figures assume (src/run/malloc-tuning.ts).
    const env = new Map(
      final.lines
        .filter((l) => l.startsWith('ENV '))
        .flatMap((l) => [...l.slice(4).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const)),
    );
    for (const [name, value] of Object.entries(MALLOC_TUNING)) expect(env.get(name), name).toBe(value);
  });

  it('.dockerignore leaves out local builds and dependencies but not what the image copies', async () => {
    const ignored = (await readFile(join(REPO, '.dockerignore'), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const p of ['node_modules', 'dist', 'test', '.git']) expect(ignored).toContain(p);
    const copied = stages(await readFile(join(REPO, 'Dockerfile'), 'utf8'))
      .flatMap((s) => s.lines)
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'config']));
    for (const c of copied) {
      expect(
        ignored.some((p) => c === p || c.startsWith(`${p}/`)),
        `${c} is copied but ignored`,
      ).toBe(false);
      expect(existsSync(join(REPO, c)), `${c} exists`).toBe(true);
    }
  });
});

describe('the image layout, rebuilt without Docker', () => {
  const sandbox = useSandbox();
  let root: string;
  let bin: string;
  let work: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ops-image-'));
    const app = join(root, 'app');
    // `npm run build` exactly as the build stage runs it (once per test run, builtDist), copied to the image's /app/dist.
    await cp(await builtDist(), join(app, 'dist'), { recursive: true });
    await cp(join(REPO, 'config'), join(app, 'config'), { recursive: true });
    await cp(join(REPO, 'package.json'), join(app, 'package.json'));
    await symlink(join(REPO, 'node_modules'), join(app, 'node_modules'), 'dir');
    // The packaged config of this image makes NDJSON the default format: proof that dist finds it.
    const config = await readFile(join(app, 'config', 'default.yaml'), 'utf8');
    await writeFile(join(app, 'config', 'default.yaml'), config.replace(/^ {2}format: parquet\b.*$/m, '  format: ndjson'));
    await mkdir(join(root, 'bin'));
    await chmod(join(app, 'dist', 'bin', 'cli.js'), 0o755);
    bin = join(root, 'bin', 'insight-export');
    await symlink(join(app, 'dist', 'bin', 'cli.js'), bin);
    work = join(root, 'work');
    await mkdir(join(work, 'jobs'), { recursive: true });
    await writeFile(
      join(work, 'jobs', 'image.yaml'),
      stringify({
        name: 'image',
        source: { base_url: 'sandbox', chains: [1, 8453, 42161] },
        targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
        range: { from: '2024-02-01', to: '2024-02-05', chunk: '6h' },
        output: { destination: './out' },
      }),
    );
  }, 180_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const env = () => baseEnv({ PATH: `${join(root, 'bin')}:${process.env.PATH}` });

  it('the linked bin runs the bundled dist/bin/cli.js: --help lists every command', () => {
    const res = spawnSync('insight-export', ['--help'], { cwd: work, env: env(), encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    for (const c of ['run', 'plan', 'validate', 'verify', 'ddl', 'compact', 'sandbox'])
      expect(res.stdout).toMatch(new RegExp(`insight-export ${c}\\b`));
  });

  it('runs a job from /work with the packaged config of the image', () => {
    const res = spawnSync('insight-export', ['run', 'jobs/image.yaml', '--json'], {
      cwd: work,
      env: env(),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(res.status, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout) as RunReport;
    expect(report.status).toBe('succeeded');
    expect(report.rows).toBeGreaterThan(100);
    const files = readdirSync(join(work, 'out', 'transactions'), { recursive: true })
      .map(String)
      .filter((f) => /\.(parquet|ndjson\.gz)$/.test(f));
    expect(files.length).toBe(report.files);
    expect(files.every((f) => f.endsWith('.ndjson.gz'))).toBe(true);
  });

  it('under tini, SIGTERM reaches the exporter: exit 130, an interrupted report, nothing pending', async () => {
    sandbox.setLatency({ fixedMs: 400, jitterMs: 0 });
    try {
      const out = join(root, 'signal-out');
      const child = spawn(
        'tini',
        [
          '-s',
          '--',
          'insight-export',
          'run',
          'jobs/image.yaml',
          '--json',
          '--base-url',
          sandbox.url,
          '--destination',
          out,
          '--units-in-flight',
          '1',
          '--requests-in-flight',
          '1',
        ],
        { cwd: work, env: { ...env(), INSIGHT_EXPORT_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const planned = new Promise<void>((resolve) =>
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes('plan ready')) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await Promise.race([planned, exited]);
      await new Promise((r) => setTimeout(r, 1500)); // some windows done, others in flight
      expect(child.pid).toBeDefined();
      process.kill(child.pid!, 'SIGTERM'); // to tini, as the kubelet / docker stop would
      const code = await exited;
      expect(code, stderr).toBe(130);
      const report = JSON.parse(stdout) as RunReport;
      expect(report.status).toBe('interrupted');
      expect(report.windows.done).toBeLessThan(report.windows.planned);
      const keys = await listKeys(new LocalStore(out));
      expect(keys.filter((k) => k.includes('/pending/'))).toEqual([]);
      expect(keys.filter((k) => k.includes('.tmp') || k.includes('staging'))).toEqual([]);
    } finally {
      sandbox.setLatency(null);
    }
  }, 120_000);
});
