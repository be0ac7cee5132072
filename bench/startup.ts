/**
 * Start-up cost of the built CLI (issues 14.8 and 17): cold processes, median of 5.
 *   npm run build && npx tsx bench/startup.ts [cli=dist/bin/cli.js] [runs=5]
 *  - `node <cli> --version`
 *  - `node <cli> run jobs/demo.yaml` into a temp directory the demo already completed once: what a
 *    cron run of an up-to-date job costs. Against a sandbox server in another process (as a real
 *    service would be), and with the job's `base_url: sandbox` (the process builds the sandbox's
 *    data set too, which a run against a real service does not).
 * Goals: --version <= 0.3 s, the complete run <= 1 s.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..');
const cli = resolve(process.argv[2] ?? join(REPO, 'dist/bin/cli.js'));
const runs = Number(process.argv[3] ?? 5);
const out = mkdtempSync(join(tmpdir(), 'bench-startup-'));

function seconds(args: string[]): number {
  const t0 = performance.now();
  execFileSync(process.execPath, [cli, ...args], { cwd: REPO, stdio: 'ignore' });
  return (performance.now() - t0) / 1000;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times = (args: string[]) => Array.from({ length: runs }, () => seconds(args));

const server = spawn(process.execPath, [cli, 'sandbox', '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
try {
  const url = await new Promise<string>((done, fail) => {
    let text = '';
    server.stdout.on('data', (d: Buffer) => {
      const m = /^url=(\S+)$/m.exec((text += d.toString()));
      if (m) done(m[1]!);
    });
    server.on('exit', () => fail(new Error('the sandbox server stopped')));
  });
  const run = ['run', join(REPO, 'jobs/demo.yaml'), '--destination', out, '--log-level', 'silent'];
  const first = seconds([...run, '--base-url', url]);
  const version = times(['--version']);
  const complete = times([...run, '--base-url', url]);
  const completeInProcess = times(run);
  const fmt = (xs: number[]) => ({ median_s: +median(xs).toFixed(2), runs_s: xs.map((x) => +x.toFixed(2)) });
  const result = {
    cli,
    runs,
    version: fmt(version),
    complete_run: fmt(complete),
    complete_run_in_process_sandbox: fmt(completeInProcess),
    first_run_s: +first.toFixed(2),
  };
  console.log(JSON.stringify(result));
} finally {
  server.kill();
  rmSync(out, { recursive: true, force: true });
}
