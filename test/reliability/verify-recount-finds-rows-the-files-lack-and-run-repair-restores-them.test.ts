/**
 * `verify --recount` asks the service how many rows each completed window holds and compares them
 * with the files; `run --repair` exports again exactly the windows it finds (and those whose files
 * are gone). Each kind of damage that the files alone cannot show is made here, found, repaired by
 * the command verify prints, and the destination then equals a fresh export, row for row:
 *
 * - a window committed empty before the service had indexed it (what earlier versions did past the
 *   service's head): `verify` without a recount says complete;
 * - full pages cut by a broken proxy: to `limit - 1` rows (`cutFullPages`) the run still exports
 *   every row (such an answer is cut like a full one); by two rows, no answer tells, the run exits
 *   0 and `verify` says complete;
 * - a data file deleted by hand: `verify` names it, its summary counts the window as damaged, and
 *   names the repair;
 * - under the indexer profile, whose wallet route counts in two halves (self-transfers twice), the
 *   recount of a wallet is still exact.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveReadInterface, type SandboxServer } from '@insight-export/sandbox';
import type { SandboxData } from '@insight-export/sandbox';
import type { VerifyReport } from '../../src/state/verify.js';
import { exportJob, readTable, truthWalletTransactions, unixDay, type CanonRow, type OutputFormat } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { unfoldCompletedWindows } from '../helpers/completed-windows.js';
import { writeJob } from './harness.js';
import { cutFullPages, startAnswerProxy, type AnswerProxy } from '../helpers/answer-proxy.js';

const sandbox = useSandbox({});
const tmp = useTempDir('recount-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

/**
 * Other servers of the same data: a proxy cutting full pages by one row, the indexer, and proxies
 * cutting full pages by two rows in front of the sandbox and of the indexer.
 */
let cut: SandboxServer<SandboxData>;
let indexer: SandboxServer<SandboxData>;
let cutTwo: AnswerProxy;
let indexerCutTwo: AnswerProxy;
beforeAll(async () => {
  cut = await serveReadInterface(sandbox.data, { cutFullPages: 0.5 });
  indexer = await serveReadInterface(sandbox.data, { profile: 'indexer' });
  cutTwo = await startAnswerProxy([sandbox.url], { rewrite: cutFullPages(2) });
  indexerCutTwo = await startAnswerProxy([indexer.url], { rewrite: cutFullPages(2) });
});
afterAll(async () => {
  await Promise.all([cut?.close(), indexer?.close(), cutTwo?.close(), indexerCutTwo?.close()]);
});

function job(name: string, format: OutputFormat, destination: string, server: { url: string } = sandbox, to = '2024-02-04') {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  return {
    name,
    source: { base_url: server.url, chains: [1, 8453] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: susd, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to, chunk: '1d' },
    output: { format, destination },
  };
}

async function verify(jobFile: string, server: { url: string }, ...flags: string[]) {
  const args = ['verify', jobFile, '--base-url', server.url, '--log-level', 'error', ...flags];
  const [json, text] = [await runCli([...args, '--json']), await runCli(args)];
  expect(text.code).toBe(json.code);
  return { code: json.code, report: JSON.parse(json.stdout) as VerifyReport, text: text.stdout };
}

/** The job's completed windows, one marker each (damage is planted window by window). */
const markers = (out: string, name: string) => unfoldCompletedWindows(out, name);

/** Every row of every table of an export, keyed by table, sorted by item_id. */
async function contents(out: string, format: OutputFormat): Promise<Record<string, CanonRow[]>> {
  const tables = (await readdir(out)).filter((t) => !t.startsWith('_') && !t.startsWith('.')).sort();
  const all: Record<string, CanonRow[]> = {};
  for (const t of tables) all[t] = (await readTable(out, t, format)).sort((a, b) => String(a.item_id).localeCompare(String(b.item_id)));
  return all;
}

/** A fresh export of the same job from the full service, read back. */
async function freshExport(format: OutputFormat, name: string): Promise<Record<string, CanonRow[]>> {
  const dir = join(tmp.dir, `${name}-fresh`);
  const out = join(dir, 'out');
  const report = await exportJob({ job: job(name, format, out), dir, destination: out });
  expect(report.status).toBe('succeeded');
  return contents(out, format);
}

/** The repair command a verify line names for the window, run as printed (`insight-export` dropped). */
async function runRepairOf(text: string, unit: string, server: { url: string }) {
  const line = text.split('\n').find((l) => l.includes(unit) && l.includes('; repair: '));
  expect(line, `a line naming ${unit} and its repair in:\n${text}`).toBeDefined();
  const command = line!.slice(line!.indexOf('; repair: ') + '; repair: '.length).split(' ');
  expect(command.slice(0, 2)).toEqual(['insight-export', 'run']);
  expect(command).toContain('--repair');
  // The flags verify was given (here the service's URL) are part of the command.
  expect(command.slice(3, 5)).toEqual(['--base-url', server.url]);
  return runCli([...command.slice(1), '--log-level', 'error']);
}

/** End of a two-day range (the indexer pages slowly). */
const TWO_DAYS = '2024-02-03';
const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

describe('verify --recount and run --repair', () => {
  it(
    'a window committed empty before the service indexed it: found by the recount only, repaired exactly',
    { timeout: 120_000 },
    async () => {
      const format = 'parquet';
      const name = 'early';
      const dir = join(tmp.dir, name);
      const out = join(dir, 'out');
      const jobFile = await writeJob(dir, job(name, format, out));
      expect((await exportJob({ job: job(name, format, out), dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');

      // What a version that committed windows past the service's head left: the window recorded complete and empty.
      const early = (await markers(out, name)).find((m) => m.record.unit_key.startsWith('events/') && m.record.rows > 0)!;
      for (const f of early.record.files) await unlink(join(out, f.key));
      await writeFile(join(out, early.key), JSON.stringify({ ...early.record, rows: 0, files: [] }));

      const plain = await verify(jobFile, sandbox);
      expect(plain.code).toBe(0);

      const found = await verify(jobFile, sandbox, '--recount');
      expect(found.code).toBe(1);
      expect(found.report.problems.map((p) => [p.kind, p.unit, p.window])).toEqual([
        ['recount-mismatch', early.record.unit_key, [early.record.start, early.record.end]],
      ]);
      expect(found.report.recount!.mismatches).toEqual([
        expect.objectContaining({ files_rows: 0, service_rows: early.record.rows, status: 'short' }),
      ]);
      expect(found.text).toContain(
        `RECOUNT-MISMATCH ${early.record.unit_key} [${iso(early.record.start)}, ${iso(early.record.end)}): files hold 0 rows, the service counts ${early.record.rows}`,
      );
      expect(found.text).toContain(`--repair --from ${iso(early.record.start)} --to ${iso(early.record.end)}`);
      expect(found.text).toMatch(/windows: 9 completed \(8 intact, 1 damaged\), 0 missing of 9 planned/);

      const repaired = await runRepairOf(found.text, early.record.unit_key, sandbox);
      expect(repaired.code).toBe(0);
      expect((await verify(jobFile, sandbox, '--recount')).code).toBe(0);
      expect(await contents(out, format)).toEqual(await freshExport(format, name));
    },
  );

  it(
    'full pages cut by a proxy: by one row the run exports every row; by two the run and verify say complete, the recount finds every short window, the repair restores them',
    { timeout: 120_000 },
    async () => {
      const format = 'ndjson';
      const name = 'cut';
      const dir = join(tmp.dir, name);
      const one = join(dir, 'one');
      await writeJob(dir, job(name, format, one), 'one.yaml');
      const exact = await exportJob({
        job: job(name, format, one, cut),
        dir,
        jobFileName: 'one-run.yaml',
        destination: one,
        pageSize: 100,
      });
      expect(exact.status).toBe('succeeded');
      expect(await contents(one, format)).toEqual(await freshExport(format, name));

      const out = join(dir, 'out');
      const jobFile = await writeJob(dir, job(name, format, out));
      const report = await exportJob({
        job: job(name, format, out, cutTwo),
        dir,
        jobFileName: 'run.yaml',
        destination: out,
        pageSize: 100,
      });
      expect(report.status).toBe('succeeded');
      expect((await verify(jobFile, sandbox)).code).toBe(0);

      const found = await verify(jobFile, sandbox, '--recount');
      expect(found.code).toBe(1);
      const short = found.report.recount!.mismatches;
      expect(short.length).toBeGreaterThan(0);
      for (const m of short) expect(m.status).toBe('short');
      const fresh = await freshExport(format, name);
      const truth = Object.values(fresh).reduce((n, rows) => n + rows.length, 0);
      const lost = short.reduce((n, m) => n + (m.service_rows! - m.files_rows), 0);
      expect(report.rows + lost).toBe(truth);
      console.log(
        `cut pages: ${lost} of ${truth} rows missing in ${short.length} windows; recount: ${found.report.recount!.requests} requests`,
      );
      expect(found.text).toContain('repair every window above: insight-export run');

      const repaired = await runCli(['run', jobFile, '--repair', '--base-url', sandbox.url, '--log-level', 'error']);
      expect(repaired.code).toBe(0);
      expect((await verify(jobFile, sandbox, '--recount')).code).toBe(0);
      expect(await contents(out, format)).toEqual(fresh);
    },
  );

  it(
    'a data file deleted by hand: verify names it, counts the window damaged, names the repair; the repair restores it',
    { timeout: 120_000 },
    async () => {
      const format = 'parquet';
      const name = 'deleted';
      const dir = join(tmp.dir, name);
      const out = join(dir, 'out');
      const jobFile = await writeJob(dir, job(name, format, out));
      expect((await exportJob({ job: job(name, format, out), dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');
      const gone = (await markers(out, name)).find((m) => m.record.unit_key.startsWith('transactions/') && m.record.files.length > 0)!;
      await unlink(join(out, gone.record.files[0]!.key));

      const found = await verify(jobFile, sandbox);
      expect(found.code).toBe(1);
      expect(found.report.windows).toEqual({ planned: 9, completed: 9, damaged: 1, missing: 0, pending: 0 });
      expect(found.text).toMatch(/windows: 9 completed \(8 intact, 1 damaged\), 0 missing of 9 planned/);
      const line = found.text.split('\n').find((l) => l.includes('MISSING-FILE'))!;
      expect(line).toContain(`${gone.record.unit_key} [${iso(gone.record.start)}, ${iso(gone.record.end)}) ${gone.record.files[0]!.key}`);
      expect(line).toContain(
        `; repair: insight-export run ${jobFile} --base-url ${sandbox.url} --repair --from ${iso(gone.record.start)} --to ${iso(gone.record.end)}`,
      );

      const recounted = await verify(jobFile, sandbox, '--recount');
      expect(recounted.report.recount!.mismatches.map((m) => [m.unit, m.window, m.files_rows, m.service_rows])).toEqual([
        [gone.record.unit_key, [gone.record.start, gone.record.end], gone.record.rows - gone.record.files[0]!.rows, gone.record.rows],
      ]);

      const repaired = await runRepairOf(found.text, gone.record.unit_key, sandbox);
      expect(repaired.code).toBe(0);
      const after = await verify(jobFile, sandbox, '--recount');
      expect(after.code).toBe(0);
      expect(after.text).toMatch(/windows: 9 completed \(9 intact, 0 damaged\), 0 missing of 9 planned/);
      expect(await contents(out, format)).toEqual(await freshExport(format, name));
    },
  );

  it('under the indexer profile a wallet counted in halves is recounted exactly', { timeout: 120_000 }, async () => {
    const format = 'ndjson';
    const name = 'halves';
    const dir = join(tmp.dir, name);
    const out = join(dir, 'out');
    const alice = sandbox.data.wallet('alice.eth')!.address;
    const spec = (destination: string, server: { url: string }) => job(name, format, destination, server, TWO_DAYS);
    const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay(TWO_DAYS) };
    const self = truthWalletTransactions(sandbox.data, alice, [1, 8453], range).filter(
      (t) => t.from_address === alice && t.to_address === alice,
    );
    expect(self.length).toBeGreaterThan(0);
    const jobFile = await writeJob(dir, spec(out, indexer));
    expect((await exportJob({ job: spec(out, indexer), dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');
    const ok = await verify(jobFile, indexer, '--recount');
    expect(ok.code).toBe(0);
    expect(ok.report.recount!.not_provable).toEqual([]);
    expect(ok.report.recount!.windows_ok).toBe(6);
    // Counted in halves: the wallet's windows one chain at a time (2 x 2), the events as usual (2).
    expect(ok.report.recount!.requests).toBe(6);

    // The same export through a proxy cutting full pages by two rows: the wallet's short windows are found under the indexer too.
    const damaged = join(dir, 'damaged');
    const damagedJob = await writeJob(dir, spec(damaged, indexer), 'damaged.yaml');
    const cutReport = await exportJob({
      job: spec(damaged, indexerCutTwo),
      dir,
      jobFileName: 'damaged-run.yaml',
      destination: damaged,
      pageSize: 100,
    });
    expect(cutReport.status).toBe('succeeded');
    const found = await verify(damagedJob, indexer, '--recount');
    expect(found.code).toBe(1);
    expect(found.report.recount!.mismatches.some((m) => m.unit.startsWith('transactions/'))).toBe(true);
    const repaired = await runCli(['run', damagedJob, '--repair', '--base-url', indexer.url, '--log-level', 'error']);
    expect(repaired.code).toBe(0);
    expect((await verify(damagedJob, indexer, '--recount')).code).toBe(0);
    expect(await contents(damaged, format)).toEqual(await contents(out, format));
  });

  it('aggregates and NFT holdings are said not to be recounted', { timeout: 60_000 }, async () => {
    const name = 'skipped';
    const dir = join(tmp.dir, name);
    const out = join(dir, 'out');
    const alice = sandbox.data.wallet('alice.eth')!.address;
    const spec = {
      name,
      source: { base_url: sandbox.url, chains: [1] },
      targets: [{ wallet: alice, datasets: ['transactions', 'aggregates', 'nft_holdings'] }],
      aggregates: { group_by: ['chain_id'], aggregate: ['count() as n'] },
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      output: { format: 'ndjson', destination: out },
    };
    const jobFile = await writeJob(dir, spec);
    expect((await exportJob({ job: spec, dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');
    const res = await verify(jobFile, sandbox, '--recount');
    expect(res.code).toBe(0);
    const units = (await markers(out, name)).map((m) => m.record.unit_key);
    const skipped = [...new Set(units.filter((u) => !u.startsWith('transactions/')))].sort();
    expect(skipped).toHaveLength(2);
    expect(res.report.recount!.skipped.map((s) => s.unit)).toEqual(skipped);
    for (const unit of skipped)
      expect(res.text).toContain(`not recounted ${unit}: ${unit.split('/')[0]} rows are not the service's rows one for one`);
    expect(res.report.recount!.windows_checked).toBe(2);
  });

  it('a count the answer cannot prove is said per unit, never guessed', { timeout: 60_000 }, async () => {
    const name = 'unprovable';
    const dir = join(tmp.dir, name);
    const out = join(dir, 'out');
    const jobFile = await writeJob(dir, job(name, 'ndjson', out));
    expect((await exportJob({ job: job(name, 'ndjson', out), dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');
    // A server whose count answers have three rows where one (or one per half) is expected, and counts that are not numbers.
    const target = new URL(sandbox.url);
    const odd = createServer((req, res) => {
      const url = new URL(req.url ?? '/', target.origin);
      void (async () => {
        const body = url.searchParams.has('aggregate')
          ? {
              meta: { chain_ids: url.searchParams.getAll('chain_id').map(Number) },
              aggregations: url.searchParams.has('group_by')
                ? url.searchParams.getAll('chain_id').map((c) => ({ chain_id: c, insight_export_rows: 'many' }))
                : [{ insight_export_rows: 1 }, { insight_export_rows: 2 }, { insight_export_rows: 3 }],
            }
          : await (await fetch(`${target.origin}${url.pathname}${url.search}`)).json();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      })();
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    try {
      const server = { url: `http://127.0.0.1:${(odd.address() as AddressInfo).port}${target.pathname}` };
      const res = await verify(jobFile, server, '--recount');
      expect(res.code).toBe(0);
      const c = res.report.recount!;
      expect([c.windows_checked, c.windows_ok, c.mismatches.length, c.not_provable.length]).toEqual([9, 0, 0, 9]);
      expect(res.text.split('\n')[0]).toContain('(9 window(s) not provable by the recount)');
      const units = [...new Set((await markers(out, name)).map((m) => m.record.unit_key))].sort();
      for (const unit of units) expect(res.text).toMatch(new RegExp(`not provable ${unit}: \\d window\\(s\\), the service`));
    } finally {
      odd.closeAllConnections();
      await new Promise<void>((resolve) => odd.close(() => resolve()));
    }
  });

  it(
    'under --profile hostile (misbehaving answers on top of the indexer) a complete export recounts equal',
    { timeout: 60_000 },
    async () => {
      const hostile = await serveReadInterface(sandbox.data, { profile: 'hostile' });
      try {
        const name = 'hostile';
        const dir = join(tmp.dir, name);
        const out = join(dir, 'out');
        const spec = job(name, 'ndjson', out, hostile, TWO_DAYS);
        const quiet = {
          ...spec,
          targets: [{ wallet: sandbox.data.wallet('bob.eth')!.address, datasets: ['transactions'] }, spec.targets[1]!],
        };
        const jobFile = await writeJob(dir, quiet);
        expect((await exportJob({ job: quiet, dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');
        const res = await verify(jobFile, hostile, '--recount');
        expect(res.code, res.text).toBe(0);
        expect([res.report.recount!.windows_checked, res.report.recount!.windows_ok]).toEqual([6, 6]);
      } finally {
        await hostile.close();
      }
    },
  );

  it('a block window names its blocks, and its repair command takes them', { timeout: 60_000 }, async () => {
    const name = 'blocks';
    const dir = join(tmp.dir, name);
    const out = join(dir, 'out');
    const first = sandbox.data.chain(1)!.firstBlock;
    const spec = {
      name,
      source: { base_url: sandbox.url, chains: [1] },
      targets: [{ wallet: sandbox.data.wallet('bob.eth')!.address, datasets: ['transactions'] }],
      range: { by: 'block', from: first, to: first + 20_000, chunk: 5_000 },
      output: { format: 'ndjson', destination: out },
    };
    const jobFile = await writeJob(dir, spec);
    expect((await exportJob({ job: spec, dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');
    const before = await contents(out, 'ndjson');
    const gone = (await markers(out, name)).find((m) => m.record.files.length > 0)!;
    await unlink(join(out, gone.record.files[0]!.key));
    const found = await verify(jobFile, sandbox);
    const { start, end } = gone.record;
    expect(found.text).toContain(`MISSING-FILE ${gone.record.unit_key} blocks [${start}, ${end})`);
    expect(found.text).toContain(`--repair --from ${start} --to ${end}`);
    expect((await runRepairOf(found.text, gone.record.unit_key, sandbox)).code).toBe(0);
    expect((await verify(jobFile, sandbox, '--recount')).code).toBe(0);
    expect(await contents(out, 'ndjson')).toEqual(before);
  });
});
