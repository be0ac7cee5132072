/**
 * Throughput and peak memory of the file writers: 1M transaction-like rows (~1.4 KB each as
 * NDJSON) written in 1000-row pages, each configuration in its own child process so that peak
 * RSS belongs to one writer. Not a test: run `npx tsx bench/experiments/sink-throughput.ts [rows]`.
 *
 * 50 distinct pages are generated up front and written over and over, so the generator's own
 * CPU and garbage do not blur the figures (the "pages only" line is that baseline).
 * writer rows/s = rows / time spent inside write() + finish();
 * CPU µs/row = CPU time of every thread of the process (main, zlib pool, DuckDB), per row, after
 * the pages exist: what the writer costs a busy machine, less sensitive to other load than wall time;
 * peak RSS includes the generator's own pages (the "generate only" line is that baseline).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeDuckDB, createFileWriter, type FileWriterOptions } from '../../src/sink/index.js';
import { makeTransactionRows, transactionColumns } from '../../test/sink/fixtures.js';

interface Config {
  label: string;
  opts: Omit<FileWriterOptions, 'columns' | 'stagingDir'> | null;
}

const CONFIGS: Config[] = [
  { label: 'pages only (baseline)', opts: null },
  { label: 'NDJSON.gz level 6 (default)', opts: { format: 'ndjson', compression: 'gzip' } },
  { label: 'NDJSON.gz level 1', opts: { format: 'ndjson', compression: 'gzip', compressionLevel: 1 } },
  { label: 'NDJSON plain', opts: { format: 'ndjson', compression: 'none' } },
  { label: 'Parquet DuckDB zstd, 50k groups (default)', opts: { format: 'parquet', parquetEngine: 'duckdb', compression: 'zstd' } },
  { label: 'Parquet DuckDB snappy', opts: { format: 'parquet', parquetEngine: 'duckdb', compression: 'snappy' } },
  {
    label: 'Parquet DuckDB zstd, 100k groups',
    opts: { format: 'parquet', parquetEngine: 'duckdb', compression: 'zstd', rowGroupSize: 100_000 },
  },
  { label: 'Parquet hyparquet zstd, 25k groups (default)', opts: { format: 'parquet', parquetEngine: 'hyparquet', compression: 'zstd' } },
  {
    label: 'Parquet hyparquet zstd, 50k groups',
    opts: { format: 'parquet', parquetEngine: 'hyparquet', compression: 'zstd', rowGroupSize: 50_000 },
  },
  { label: 'Parquet hyparquet snappy', opts: { format: 'parquet', parquetEngine: 'hyparquet', compression: 'snappy' } },
];

const PAGE = 1000;
const DISTINCT_PAGES = 50;

async function runOne(index: number, totalRows: number): Promise<void> {
  const config = CONFIGS[index]!;
  const stagingDir = mkdtempSync(join(tmpdir(), 'sink-bench-'));
  const pages = Array.from({ length: DISTINCT_PAGES }, (_, i) => makeTransactionRows(PAGE, 7, i * PAGE));
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  let inWriter = 0;
  let bytes = 0;
  let finishMs = 0;
  try {
    const writer = config.opts ? await createFileWriter({ ...config.opts, columns: transactionColumns, stagingDir }) : null;
    for (let start = 0, p = 0; start < totalRows; start += PAGE, p = (p + 1) % DISTINCT_PAGES) {
      const rows = pages[p]!.slice(0, totalRows - start);
      const t = performance.now();
      await writer?.write(rows);
      inWriter += performance.now() - t;
    }
    if (writer) {
      const t = performance.now();
      const file = await writer.finish();
      finishMs = performance.now() - t;
      inWriter += finishMs;
      bytes = file.bytes;
    }
    await closeDuckDB();
  } finally {
    const left = readdirSync(stagingDir).length;
    rmSync(stagingDir, { recursive: true, force: true });
    // eslint-disable-next-line no-unsafe-finally -- files left behind are the failure this bench exists to catch, even over a failed run
    if (left > 1) throw new Error(`${left} files left in the staging directory`);
  }
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const result = {
    label: config.label,
    writerRowsPerSec: config.opts ? Math.round(totalRows / (inWriter / 1000)) : null,
    wallRowsPerSec: Math.round(totalRows / wall),
    cpuUs: cpu.user + cpu.system,
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    fileMB: +(bytes / 1e6).toFixed(1),
    finishSec: +(finishMs / 1000).toFixed(1),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--one') {
    await runOne(Number(args[1]), Number(args[2]));
    return;
  }
  const totalRows = Number(args[0] ?? 1_000_000);
  const self = fileURLToPath(import.meta.url);
  console.log(`sink throughput: ${totalRows} transaction rows, ${PAGE}-row pages, node ${process.version}`);
  console.log('| writer | writer rows/s | CPU µs/row | wall rows/s | peak RSS MB | file MB | finish() s |');
  console.log('|---|---|---|---|---|---|---|');
  for (let i = 0; i < CONFIGS.length; i++) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--one', String(i), String(totalRows)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const r = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown> & { cpuUs: number };
    const cpuUsPerRow = (r.cpuUs / totalRows).toFixed(1);
    console.log(
      `| ${r.label} | ${r.writerRowsPerSec ?? '-'} | ${cpuUsPerRow} | ${r.wallRowsPerSec} | ${r.peakRssMB} | ${r.fileMB} | ${r.finishSec} |`,
    );
  }
}

await main();
