/**
 * `remove-orphan-files` on a Parquet or NDJSON destination deletes the job's data files that no
 * state names, and nothing else: never a file a completed window lists, nor one a pending marker
 * names (a commit under way: the files it uploads and those of the windows it replaces), nor a file
 * of another target or outside the job's folders. It holds the job's lease: while a run of the job
 * holds it, the command exits 75 and deletes nothing. `--dry-run` lists and deletes nothing.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { acquireLease, leaseName } from '../../src/state/lease.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli } from '../helpers/cli-in-process.js';
import { completedWindows } from '../helpers/completed-windows.js';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from '../reliability/harness.js';

const sandbox = useSandbox({ seed: 7, transactions: 2_000 });
const tmp = useTempDir('remove-orphans-');

/** Every file of a local destination (state included) with its SHA-256. */
function allFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of listFiles(root).sort())
    if (!rel.startsWith('.insight-export-tmp/'))
      out.set(
        rel,
        createHash('sha256')
          .update(readFileSync(join(root, rel)))
          .digest('hex'),
      );
  return out;
}

const plant = (out: string, from: string, to: string) => {
  mkdirSync(dirname(join(out, to)), { recursive: true });
  copyFileSync(join(out, from), join(out, to));
};

/** The key of another window of the same target (zero-padded as the names are). */
const otherWindow = (key: string, start: number, end: number) =>
  key.replace(
    /__(\d+)_(\d+)__/,
    (_, a: string, b: string) => `__${String(start).padStart(a.length, '0')}_${String(end).padStart(b.length, '0')}__`,
  );

it('deletes only the job files no completed window or pending commit names, under the job lease', { timeout: 120_000 }, async () => {
  const name = 'orphans';
  const dir = join(tmp.dir, name);
  const out = join(dir, 'out');
  const wallet = sandbox.data.wallets[0]!.address;
  const jobFile = await writeJob(dir, {
    name,
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [{ wallet, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
    output: { format: 'ndjson', destination: out },
  });
  expect((await runCli(['run', jobFile, '--log-level', 'error'])).code).toBe(0);
  const windows = (await completedWindows(out, name)).filter((w) => w.record.files.length > 0);
  expect(windows.length).toBeGreaterThan(1);
  const [a, b] = windows;
  const fileA = a!.record.files[0]!.key;
  const fileB = b!.record.files[0]!.key;

  // Unreferenced: a file of a window no state names.
  const orphan = otherWindow(fileA, a!.record.start - 86_400, a!.record.start);
  plant(out, fileA, orphan);
  // A commit under way: its pending marker names the file it uploads, and replaces window b.
  const uploading = otherWindow(fileB, b!.record.start, b!.record.end + 86_400);
  plant(out, fileB, uploading);
  const pendingKey = `_state/${name}/pending/${b!.record.unit_key}/${b!.record.start}_${b!.record.end + 86_400}.json`;
  mkdirSync(dirname(join(out, pendingKey)), { recursive: true });
  writeFileSync(
    join(out, pendingKey),
    JSON.stringify({ keys: [uploading], run_id: 'live', replaces: [{ start: b!.record.start, end: b!.record.end, keys: [fileB] }] }),
  );
  // Not the job's: another target's file in its folder, and a file outside its folders.
  const otherTarget = fileA.replace(wallet, '0x000000000000000000000000000000000000dead');
  plant(out, fileA, otherTarget);
  plant(out, fileA, `elsewhere/${fileA.slice(fileA.lastIndexOf('/') + 1)}`);
  const before = allFiles(out);

  const store = new LocalStore(out);
  const lease = await acquireLease(store, name, { runId: 'a-run-of-the-job', name: leaseName(null) });
  const busy = await runCli(['remove-orphan-files', jobFile, '--log-level', 'error']);
  expect(busy.code).toBe(75);
  await lease.release();
  const withoutLease = (m: Map<string, string>) => new Map([...m].filter(([k]) => !k.startsWith(`_state/${name}/lease`)));
  expect(withoutLease(allFiles(out))).toEqual(withoutLease(before));

  const dry = await runCli(['remove-orphan-files', jobFile, '--dry-run', '--json', '--log-level', 'error']);
  expect(dry.code, dry.stderr).toBe(0);
  const listed = JSON.parse(dry.stdout) as { deleted: string[]; dry_run: boolean };
  expect(listed).toMatchObject({ dry_run: true, deleted: [orphan] });

  const done = await runCli(['remove-orphan-files', jobFile, '--log-level', 'error']);
  expect(done.code, done.stderr).toBe(0);
  expect(done.stdout).toContain(`removed: job ${name}, 1 of its`);
  expect(done.stdout).toContain(`  ${orphan}`);
  const after = allFiles(out);
  expect(after.has(orphan)).toBe(false);
  for (const [key, sha] of before)
    if (key !== orphan && !key.startsWith(`_state/${name}/lease`) && !key.startsWith(`_state/${name}/last`))
      expect(after.get(key), key).toBe(sha);
});
