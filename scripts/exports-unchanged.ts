/**
 * Proves that exports are unchanged by a change of the code: every export of
 * scripts/exports-unchanged/exports.ts (the jobs of jobs/ against the sandbox, jobs/s3-export.yaml
 * on a throwaway radosgw; the demo job in every format as one run, four shards and two workers) is
 * made with the current tree, read back (DuckDB, icebird) and reduced to a digest per table (row
 * count, columns, SHA-256 of the sorted canonical rows), then
 *
 *   npx tsx scripts/exports-unchanged.ts --capture   writes the digests to test/fixtures/exports-unchanged.json
 *   npx tsx scripts/exports-unchanged.ts --check     compares them with that file; exit 1 naming each export that differs
 *
 * `--only <text>` makes only the exports whose name contains the text; `--keep <dir>` leaves the
 * exports there (one folder each, to compare rows by hand) instead of removing them. Run by hand
 * at merges (a few minutes), not by the suite.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXPORTS, runCli, runsOf, startServedSandbox, type ExportSpec, type ServedSandbox } from './exports-unchanged/exports.js';
import { startRadosgw, type Radosgw } from './exports-unchanged/radosgw.js';
import { digestExport, type CanonValue, type ExportDigest } from './exports-unchanged/rows.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIGESTS = join(root, 'test/fixtures/exports-unchanged.json');

interface DigestsFile {
  captured_from: { commit: string; uncommitted_changes: boolean; at: string };
  exports: Record<string, ExportDigest>;
}

/** Makes one export into a fresh folder and digests it; throws naming the run that failed. */
async function makeExport(spec: ExportSpec, sandbox: ServedSandbox, work: string, s3: () => Promise<Radosgw>): Promise<ExportDigest> {
  const destination = join(work, spec.name.replaceAll('/', '_'));
  rmSync(destination, { recursive: true, force: true });
  const gateway = spec.s3 ? await s3() : undefined;
  if (gateway && spec.s3) await gateway.createBucket(spec.s3.bucket);
  const days = new Set<string>();
  days.add(new Date().toISOString().slice(0, 10));
  // The shards of a sharded export run at once, as an indexed job's do.
  const runs = runsOf(spec, destination, sandbox);
  const ended = await Promise.all(runs.map(async (args) => ({ args, ...(await runCli(args, gateway?.env)) })));
  days.add(new Date().toISOString().slice(0, 10));
  for (const run of ended) {
    if (run.code !== 0) {
      throw new Error(`insight-export ${run.args.join(' ')} exited ${run.code}:\n${run.stderr.split('\n').slice(-15).join('\n')}`);
    }
  }
  if (gateway && spec.s3) await gateway.download(spec.s3.bucket, spec.s3.prefix, destination);
  const rewrite = spec.runDay
    ? (v: CanonValue) => (typeof v === 'string' ? [...days].reduce((s, d) => s.replaceAll(d, '<run-day>'), v) : v)
    : undefined;
  return digestExport(destination, spec.read, rewrite);
}

/** What differs between a captured digest and a new one, one line each (none: equal). */
function differences(before: ExportDigest | undefined, after: ExportDigest): string[] {
  if (!before) return ['not in the captured digests (run --capture on the tree before the change)'];
  const out: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[table];
    const a = after[table];
    if (!b) out.push(`table ${table}: new (${a!.rows} rows)`);
    else if (!a) out.push(`table ${table}: missing (captured with ${b.rows} rows)`);
    else {
      if (a.rows !== b.rows) out.push(`table ${table}: ${a.rows} rows, captured ${b.rows}`);
      if (a.columns !== b.columns) out.push(`table ${table}: columns (names or types) differ`);
      if (a.sha256 !== b.sha256)
        out.push(`table ${table}: rows differ (sha256 ${a.sha256.slice(0, 12)}, captured ${b.sha256.slice(0, 12)})`);
    }
  }
  return out;
}

/** The digests in the order of EXPORTS (then any others by name), so that captures diff well. */
function inOrder(digests: Record<string, ExportDigest>): Record<string, ExportDigest> {
  const rank = (name: string) => {
    const i = EXPORTS.findIndex((s) => s.name === name);
    return i < 0 ? EXPORTS.length : i;
  };
  return Object.fromEntries(Object.entries(digests).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1)));
}

function treeCommit(): { commit: string; uncommitted_changes: boolean } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  return {
    commit: git('rev-parse', 'HEAD'),
    uncommitted_changes: git('status', '--porcelain', '--', 'src', 'packages', 'jobs', 'config') !== '',
  };
}

async function main(argv: string[]): Promise<number> {
  const mode = argv.includes('--capture') ? 'capture' : argv.includes('--check') ? 'check' : undefined;
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined;
  const keep = argv.includes('--keep') ? argv[argv.indexOf('--keep') + 1] : undefined;
  if (!mode) {
    process.stderr.write('usage: npx tsx scripts/exports-unchanged.ts --check | --capture [--only <text>] [--keep <dir>]\n');
    return 2;
  }
  const specs = EXPORTS.filter((s) => only === undefined || s.name.includes(only));
  const captured: DigestsFile = existsSync(DIGESTS)
    ? (JSON.parse(readFileSync(DIGESTS, 'utf8')) as DigestsFile)
    : { captured_from: { commit: '', uncommitted_changes: false, at: '' }, exports: {} };
  if (keep) mkdirSync(keep, { recursive: true });
  const work = keep ?? mkdtempSync(join(tmpdir(), 'exports-unchanged-'));
  const sandbox = await startServedSandbox();
  let radosgw: Promise<Radosgw> | undefined;
  const s3 = () => (radosgw ??= startRadosgw());
  const made: Record<string, ExportDigest> = {};
  const failed: string[] = [];
  try {
    for (const spec of specs) {
      const started = Date.now();
      try {
        made[spec.name] = await makeExport(spec, sandbox, work, s3);
      } catch (e) {
        failed.push(`${spec.name}: ${(e as Error).message}`);
        process.stdout.write(`FAILED  ${spec.name}\n`);
        continue;
      }
      const rows = Object.values(made[spec.name]!).reduce((n, t) => n + t.rows, 0);
      const diff = mode === 'check' ? differences(captured.exports[spec.name], made[spec.name]!) : [];
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`${diff.length === 0 ? 'ok     ' : 'DIFFERS'} ${spec.name} (${rows} rows, ${seconds} s)\n`);
      for (const d of diff) process.stdout.write(`          ${d}\n`);
      if (diff.length > 0) failed.push(`${spec.name}: ${diff.join('; ')}`);
    }
  } finally {
    await sandbox.close();
    if (radosgw) await (await radosgw).stop();
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
  if (mode === 'capture' && failed.length === 0) {
    const file: DigestsFile = {
      captured_from: { ...treeCommit(), at: new Date().toISOString() },
      exports: inOrder({ ...(only === undefined ? {} : captured.exports), ...made }),
    };
    writeFileSync(DIGESTS, `${JSON.stringify(file, null, 2)}\n`);
    process.stdout.write(`wrote ${Object.keys(made).length} exports' digests to ${DIGESTS}\n`);
  }
  if (failed.length > 0) {
    process.stderr.write(`\n${failed.length} export(s) ${mode === 'check' ? 'differ or failed' : 'failed'}:\n${failed.join('\n')}\n`);
    return 1;
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
