/**
 * Requests per 1,000 rows, and exactness, of the bench's wallet job (the sandbox's hot wallet on
 * chains 1, 8453 and 42161, every day of the data, 1-day windows, default page size) against an
 * in-process sandbox of a given profile. Not a test: prints one JSON line.
 *
 *   node --import tsx bench/experiments/paging-requests.ts --profile indexer --transactions 200000
 *   node --import tsx bench/experiments/paging-requests.ts --profile hostile --transactions 1600000 --check   # ≥ 500,000 rows
 *
 * rows_exported / rows_truth: what the run wrote and what the wallet holds in the range.
 * With --check, every exported row is read back (NDJSON) and compared with the sandbox's records:
 * same item_id set, no duplicate, every field the record has equal.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/config/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { runJob } from '../../src/run/run-job.js';
import { startSandbox } from '../../src/sandbox/index.js';

const argv = process.argv.slice(2);
const get = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const profile = get('profile') ?? 'contract';
const transactions = Number(get('transactions') ?? 200_000);
const pageSize = get('page-size') ? Number(get('page-size')) : undefined;
const check = argv.includes('--check');
const CHAINS = [1, 8453, 42161];
const FROM = '2024-02-01';

const sandbox = await startSandbox({ seed: 42, transactions, profile: profile as never });
const work = mkdtempSync(join(tmpdir(), 'insight-paging-'));
try {
  const data = sandbox.data;
  const wallet = data.wallets[0]!;
  const newest = Math.max(...data.chains.map((c) => c.headTimestamp));
  const to = new Date((Math.floor(newest / 86_400) + 1) * 86_400_000).toISOString().slice(0, 10);
  const jobFile = join(work, 'job.yaml');
  writeFileSync(
    jobFile,
    [
      'name: bench',
      'source:',
      '  base_url: sandbox',
      `  chains: [${CHAINS.join(', ')}]`,
      'targets:',
      `  - wallet: "${wallet.address}"`,
      '    datasets: [transactions]',
      'range:',
      `  from: "${FROM}"`,
      `  to: "${to}"`,
      '  chunk: 1d',
      'decode: false',
      '',
    ].join('\n'),
  );
  const job = await loadJob(jobFile);
  const out = join(work, 'out');
  const config = resolveConfig({
    job,
    env: {},
    configFile: null,
    cliFlags: { baseUrl: sandbox.url, destination: out, stagingDir: join(work, 'staging'), format: 'ndjson', compression: 'none' },
    require: ['source', 'destination'],
  });
  const t0 = performance.now();
  const report = await runJob({ job, config, logger: silentLogger, ...(pageSize ? { pageSize } : {}) });
  const seconds = (performance.now() - t0) / 1000;
  const from = Date.parse(FROM) / 1000;
  // `to` lies past every chain's head: each chain is exported up to its head minus the safety lag (900 s).
  const truth = CHAINS.flatMap((c) => {
    const end = Math.min(Date.parse(to) / 1000, data.chain(c)!.headTimestamp - 900 + 1);
    return data.allWalletTransactions(
      wallet.address,
      data.parseTransactionsQuery(`chain_id=${c}&filter_block_timestamp_gte=${from}&filter_block_timestamp_lt=${end}`),
    );
  });
  const result: Record<string, unknown> = {
    profile,
    transactions,
    page_size: pageSize ?? 'default',
    status: report.status,
    rows_truth: truth.length,
    rows_exported: report.rows,
    requests: report.requests,
    retries: report.retries,
    requests_per_1000_rows: Math.round((report.requests / truth.length) * 1000 * 100) / 100,
    seconds: Math.round(seconds * 10) / 10,
  };
  if (check) {
    const byId = new Map(truth.map((t) => [`${t.chain_id}:${t.hash}:${wallet.address}`, t as unknown as Record<string, unknown>]));
    const seen = new Set<string>();
    let duplicates = 0;
    let unknown = 0;
    let fieldsDiffering = 0;
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ndjson') ? [join(dir, e.name)] : [],
      );
    for (const file of walk(join(out, 'transactions'))) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line) continue;
        const row = JSON.parse(line) as Record<string, unknown>;
        const id = row.item_id as string;
        if (seen.has(id)) duplicates++;
        seen.add(id);
        const rec = byId.get(id);
        if (!rec) {
          unknown++;
          continue;
        }
        for (const [k, v] of Object.entries(rec)) {
          if (!(k in row) || k === 'decoded') continue;
          if (String(row[k] ?? null) !== String(v ?? null)) fieldsDiffering++;
        }
      }
    }
    result.check = {
      distinct_ids: seen.size,
      duplicates,
      unknown_ids: unknown,
      missing_ids: [...byId.keys()].filter((k) => !seen.has(k)).length,
      fields_differing: fieldsDiffering,
    };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
  await sandbox.close();
}
