/**
 * `npm run demo`: exports jobs/demo.yaml from the built-in sandbox (in-process: no network, no
 * keys) into ./out/parquet and ./out/ndjson, then shows what is there — read back from the files,
 * not from the run — and the first rows of DuckDB queries over the Parquet output.
 *
 * Run it again and it resumes: every window is already exported, nothing is fetched or written,
 * and the summary is the same.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { renderTable, type TableColumn } from './commands/table.js';
import { resolveConfig } from './config/index.js';
import { InsightExportError } from './errors.js';
import { loadJob } from './job/index.js';
import { createLogger } from './log.js';
import type { RunReport } from './run/report.js';
import { runJob } from './run/run-job.js';
import { closeDuckDB } from './sink/index.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const JOB_FILE = path.join(REPO, 'jobs', 'demo.yaml');
const OUT = path.resolve('out');

const OUTPUTS = [
  { format: 'parquet', dir: path.join(OUT, 'parquet'), ext: 'parquet', reader: 'read_parquet' },
  { format: 'ndjson', dir: path.join(OUT, 'ndjson'), ext: 'ndjson.gz', reader: 'read_json' },
] as const;

/** Paths as the user would type them (relative to where the demo runs). */
function shown(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}

function sql(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

async function exportTo(output: (typeof OUTPUTS)[number]): Promise<RunReport> {
  const job = await loadJob(JOB_FILE);
  const config = resolveConfig({ job, cliFlags: { destination: output.dir, format: output.format }, require: ['source', 'destination'] });
  const logger = createLogger({ level: process.env.INSIGHT_EXPORT_LOG_LEVEL ?? 'warn' });
  return runJob({ job, config, logger });
}

function runLine(format: string, dir: string, r: RunReport): string {
  const where = `${format.padEnd(8)} -> ${shown(dir).padEnd(12)}`;
  if (r.status !== 'succeeded')
    return `${where} ${r.status.toUpperCase()}: ${r.windows.failed} window(s) failed (report: ${shown(path.join(dir, r.report_key ?? ''))})`;
  if (r.windows.planned === 0)
    return `${where} nothing new: all windows were exported before (resumed from ${shown(path.join(dir, '_state', r.job))})`;
  return `${where} exported ${r.windows.done} windows, ${r.rows} rows, ${r.files} files in ${r.duration_s} s`;
}

async function query(conn: DuckDBConnection, text: string): Promise<Record<string, string | null>[]> {
  const rows = (await conn.runAndReadAll(text)).getRowObjectsJson();
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)])));
}

function table(rows: Record<string, string | null>[], numeric: string[] = []): string {
  if (rows.length === 0) return '  (no rows)\n';
  const columns: TableColumn<Record<string, string | null>>[] = Object.keys(rows[0]!).map((k) => ({
    header: k,
    value: (r) => r[k],
    align: numeric.includes(k) ? 'right' : 'left',
  }));
  return renderTable(rows, columns)
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
}

/** Files and rows per table of each output, read from the files themselves. */
async function summary(conn: DuckDBConnection): Promise<string> {
  const rows: Record<string, string | null>[] = [];
  for (const o of OUTPUTS) {
    const tables = await query(
      conn,
      `SELECT DISTINCT split_part(file[${o.dir.length + 2}:], '/', 1) AS t FROM glob(${sql(`${o.dir}/**/*.${o.ext}`)}) ORDER BY t`,
    );
    for (const { t } of tables) {
      const [s] = await query(
        conn,
        `SELECT count(DISTINCT filename) AS files, count(*) AS rows, count(DISTINCT item_id) AS item_ids,
                array_to_string(list_sort(list_distinct(list(chain_id))), ',') AS chains,
                strftime(min(make_timestamp(block_timestamp * 1000000)), '%Y-%m-%d') || '..' ||
                strftime(max(make_timestamp(block_timestamp * 1000000)), '%Y-%m-%d') AS days
         FROM ${o.reader}(${sql(`${o.dir}/${t}/**/*.${o.ext}`)}, filename = true, hive_partitioning = false)`,
      );
      rows.push({ format: o.format, table: t!, ...s! });
    }
  }
  return table(rows, ['files', 'rows', 'item_ids']);
}

async function main(): Promise<number> {
  process.stdout.write(
    `insight-export demo: ${shown(JOB_FILE)} — the built-in sandbox (in-process, no keys): alice.eth's transactions and\n` +
      `the SUSD token's Transfer events on chains 1, 8453 and 42161, 1-4 February 2024, one window per day and chain.\n\n`,
  );
  let failed = false;
  for (const o of OUTPUTS) {
    const report = await exportTo(o);
    process.stdout.write(`${runLine(o.format, o.dir, report)}\n`);
    failed ||= report.status !== 'succeeded';
  }
  await closeDuckDB();

  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await db.connect();
  try {
    process.stdout.write(`\nWhat ${shown(OUT)} holds (read back from the files; item_id is the row key):\n`);
    process.stdout.write(await summary(conn));
    const [first] = await query(conn, `SELECT file FROM glob(${sql(`${OUTPUTS[0].dir}/transactions/**/*.parquet`)}) ORDER BY file LIMIT 1`);
    if (first?.file)
      process.stdout.write(
        `  one file per window and chain, e.g. ${shown(first.file)}\n  state and run reports: ${shown(OUTPUTS[0].dir)}/_state/demo/\n`,
      );

    const parquet = OUTPUTS[0].dir;
    const perDay = `SELECT chain_id, date, count(*) AS transactions, count(DISTINCT hash) AS hashes, CAST(sum(CAST(value AS HUGEINT)) AS VARCHAR) AS value_wei
FROM read_parquet('${shown(parquet)}/transactions/**/*.parquet', hive_partitioning = true)
GROUP BY ALL ORDER BY ALL LIMIT 6`;
    const transfers = `SELECT strftime(block_time AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS block_time_utc, chain_id, arg_from, arg_to, arg_value
FROM read_parquet('${shown(parquet)}/events_transfer_*/**/*.parquet')
ORDER BY block_time, chain_id, log_index LIMIT 5`;
    for (const [title, text, numeric] of [
      ['Transactions per chain and day (the first rows)', perDay, ['chain_id', 'transactions', 'hashes', 'value_wei']],
      ['The first SUSD transfers, decoded', transfers, ['chain_id', 'arg_value']],
    ] as const) {
      process.stdout.write(`\n${title}:\n${text.replace(/^/gm, '  ')}\n\n`);
      process.stdout.write(
        table(
          await query(
            conn,
            text.replace(/'(out\/[^']*)'/g, (_m, p: string) => sql(path.resolve(p))),
          ),
          [...numeric],
        ),
      );
    }

    process.stdout.write(
      `\nQuery it yourself:\n` +
        `  duckdb -c "SELECT count(*) FROM read_parquet('${shown(parquet)}/transactions/**/*.parquet')"\n` +
        `  python3 -c "import pyarrow as pa, pyarrow.parquet as pq, pyarrow.dataset as ds; ` +
        `print(pq.read_table('${shown(parquet)}/transactions', partitioning=ds.partitioning(pa.schema([('chain_id', pa.int64()), ('date', pa.string())]), flavor='hive')).num_rows)"\n` +
        `Run the demo again: it resumes from the state beside the data and exports nothing new.\n`,
    );
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(
      err instanceof InsightExportError
        ? `error: ${err.message}\n`
        : `demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = err instanceof InsightExportError ? err.exitCode : 1;
  },
);
