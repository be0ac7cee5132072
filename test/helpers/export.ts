/**
 * End-to-end helpers: run a job against a sandbox into a destination, programmatically (the same
 * calls the CLI makes: loadJob -> resolveConfig -> runJob), and read the output back with DuckDB.
 *
 *   const report = await exportJob({ job: {...}, dir, sandbox, destination: join(dir, 'out') });
 *   const rows = await readTable(join(dir, 'out'), 'transactions', 'parquet');
 *
 * Rows read back are canonical: integers as decimal strings, timestamps as microseconds since the
 * epoch (decimal string), strings as they are, booleans, null. The ground-truth side
 * (expectedTransactionRow / expectedEventRow) builds the same shape from sandbox records with its
 * own code, not the dataset modules under test.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { stringify } from 'yaml';
import { resolveConfig, type CliFlags } from '../../src/config/index.js';
import { loadJob } from '../../src/job/index.js';
import { createLogger, silentLogger, type Logger } from '../../src/log.js';
import type { Plan } from '../../src/plan/index.js';
import type { ProgressEvent } from '../../src/run/export-windows.js';
import type { RunReport } from '../../src/run/report.js';
import { runJob } from '../../src/run/run-job.js';
import type { EventRecord, TransactionRecord } from '../../src/source/records.js';
import type { SandboxData } from '@insight-export/sandbox';

export type CanonValue = string | boolean | null;
export type CanonRow = Record<string, CanonValue>;

export interface ExportJobInput {
  /** The job file: YAML text, or an object written as YAML. */
  job: string | Record<string, unknown>;
  /** Folder for the job file (it is written as `<dir>/<jobFileName>`). */
  dir: string;
  jobFileName?: string;
  /** Running sandbox: its URL replaces the job's base_url (as --base-url would). */
  sandbox?: { url: string; explorerUrl: string };
  /** Local path or s3://bucket/prefix (as --destination). */
  destination: string;
  /** More CLI flags (format, parquetEngine, unitsInFlight ...). */
  flags?: CliFlags;
  /** Environment seen by the config (default: none, so the caller's shell does not leak in). */
  env?: Record<string, string | undefined>;
  force?: boolean;
  /** Rows aimed at per request (runJob's pageSize); small values make windows split. */
  pageSize?: number;
  logger?: Logger;
  signal?: AbortSignal;
  onProgress?(event: ProgressEvent): void;
  onPlan?(plan: Plan): void;
}

/** Writes the job file and runs it to the end; returns the run report. */
export async function exportJob(input: ExportJobInput): Promise<RunReport> {
  const file = join(input.dir, input.jobFileName ?? 'job.yaml');
  await mkdir(input.dir, { recursive: true });
  await writeFile(file, typeof input.job === 'string' ? input.job : stringify(input.job));
  const job = await loadJob(file);
  const flags: CliFlags = { destination: input.destination, ...input.flags };
  if (input.sandbox) {
    flags.baseUrl = input.sandbox.url;
    flags.explorerUrl = input.sandbox.explorerUrl;
  }
  const config = resolveConfig({ job, cliFlags: flags, env: input.env ?? {}, configFile: null, require: ['source', 'destination'] });
  return runJob({
    job,
    config,
    logger: input.logger ?? (process.env.E2E_LOG ? createLogger({ level: process.env.E2E_LOG }) : silentLogger),
    force: input.force,
    ...(input.pageSize ? { pageSize: input.pageSize } : {}),
    signal: input.signal,
    onProgress: input.onProgress,
    onPlan: input.onPlan,
  });
}

// ------------------------------------------------------------------ DuckDB

let duck: Promise<DuckDBInstance> | undefined;

/** Runs one query on a shared in-memory DuckDB; values as DuckDB's JS conversion gives them. */
export async function duckdb(sql: string): Promise<Record<string, unknown>[]> {
  duck ??= DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await (await duck).connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
  }
}

export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

export type OutputFormat = 'parquet' | 'ndjson';

/** The DuckDB table function reading every file of one table of an export (Hive folders not parsed). */
export function tableSource(root: string, table: string, format: OutputFormat): string {
  return format === 'parquet'
    ? `read_parquet(${sqlString(`${root}/${table}/**/*.parquet`)}, hive_partitioning = false)`
    : `read_json(${sqlString(`${root}/${table}/**/*.ndjson.gz`)}, format = 'newline_delimited', sample_size = -1, hive_partitioning = false)`;
}

/** Column names and DuckDB types of what a reader sees. */
export async function describeColumns(source: string): Promise<{ name: string; type: string }[]> {
  const rows = await duckdb(`DESCRIBE SELECT * FROM ${source}`);
  return rows.map((r) => ({ name: r.column_name as string, type: r.column_type as string }));
}

/** Every row of one exported table, canonical (see the file comment). */
export async function readTable(root: string, table: string, format: OutputFormat): Promise<CanonRow[]> {
  const source = tableSource(root, table, format);
  const columns = await describeColumns(source);
  const select = columns
    .map(({ name, type }) => {
      const id = `"${name.replaceAll('"', '""')}"`;
      if (type.startsWith('TIMESTAMP')) return `CAST(epoch_us(${id}) AS VARCHAR) AS ${id}`;
      if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|DATE)$/.test(type))
        return `CAST(${id} AS VARCHAR) AS ${id}`;
      if (type === 'BOOLEAN' || type === 'VARCHAR') return id;
      return `CAST(${id} AS VARCHAR) AS ${id}`;
    })
    .join(', ');
  const rows = await duckdb(`SELECT ${select} FROM ${source}`);
  return rows.map((r) => {
    const out: CanonRow = {};
    for (const { name } of columns) {
      const v = r[name];
      out[name] = v === undefined || v === null ? null : typeof v === 'boolean' ? v : String(v);
    }
    return out;
  });
}

// ------------------------------------------------------------------ files

/** Every file below root (relative paths with "/"), sorted. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(root, p).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/** Downloads every object under an S3 prefix into a local folder (keys relative to the prefix). */
export async function downloadPrefix(client: S3Client, bucket: string, prefix: string, into: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  const base = prefix === '' ? '' : `${prefix.replace(/\/+$/, '')}/`;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: base, ContinuationToken: token }));
    for (const o of page.Contents ?? []) keys.push(o.Key!);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  for (const key of keys) {
    const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const file = join(into, ...key.slice(base.length).split('/'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, await res.Body!.transformToByteArray());
  }
  return keys.map((k) => k.slice(base.length)).sort();
}

// ------------------------------------------------------------------ ground truth

/** Every transaction of a wallet on the chains in [fromTime, toTime) (unix seconds), straight from the data set. */
export function truthWalletTransactions(data: SandboxData, wallet: string, chainIds: number[], range: Range): TransactionRecord[] {
  const q = data.parseTransactionsQuery(`chain_id=${chainIds.join(',')}&${rangeFilters(range)}`);
  return data.allWalletTransactions(wallet, q);
}

export function truthContractEvents(
  data: SandboxData,
  contract: string,
  signature: string,
  chainIds: number[],
  range: Range,
): EventRecord[] {
  const q = data.parseEventsQuery(`chain_id=${chainIds.join(',')}&${rangeFilters(range)}`);
  return data.allContractEvents(contract, signature, q);
}

export type Range = { by: 'time' | 'block'; from: number; to: number };

function rangeFilters(r: Range): string {
  const col = r.by === 'time' ? 'block_timestamp' : 'block_number';
  return `filter_${col}_gte=${r.from}&filter_${col}_lt=${r.to}`;
}

const str = (v: string | number | null | undefined): CanonValue => (v === null || v === undefined ? null : String(v));

/** The exported row a wallet's transaction must read back as (decode: false columns). */
export function expectedTransactionRow(t: TransactionRecord, wallet: string): CanonRow {
  return {
    item_id: `${t.chain_id}:${t.hash}:${wallet.toLowerCase()}`,
    chain_id: str(t.chain_id),
    block_number: str(t.block_number),
    block_timestamp: str(t.block_timestamp),
    block_time: String(BigInt(t.block_timestamp) * 1_000_000n),
    block_hash: t.block_hash,
    wallet_address: wallet.toLowerCase(),
    hash: t.hash,
    nonce: str(t.nonce),
    transaction_index: str(t.transaction_index),
    from_address: t.from_address,
    to_address: t.to_address,
    value: t.value,
    gas_price: t.gas_price,
    gas: str(t.gas),
    function_selector: t.function_selector,
    data: t.data,
    max_fee_per_gas: t.max_fee_per_gas,
    max_priority_fee_per_gas: t.max_priority_fee_per_gas,
    transaction_type: str(t.transaction_type),
    r: t.r,
    s: t.s,
    v: t.v,
    access_list_json: t.access_list_json,
    authorization_list_json: t.authorization_list_json,
    contract_address: t.contract_address,
    gas_used: str(t.gas_used),
    cumulative_gas_used: str(t.cumulative_gas_used),
    effective_gas_price: t.effective_gas_price,
    blob_gas_used: str(t.blob_gas_used),
    blob_gas_price: t.blob_gas_price,
    logs_bloom: t.logs_bloom,
    status: str(t.status),
  };
}

/** The exported row of a Transfer(address indexed from, address indexed to, uint256 value) log. */
export function expectedTransferRow(e: EventRecord, data: SandboxData): CanonRow {
  const args = data.logArgs(e.chain_id, e.transaction_hash);
  return {
    item_id: `${e.chain_id}:${e.transaction_hash}:${e.log_index}`,
    chain_id: str(e.chain_id),
    block_number: str(e.block_number),
    block_timestamp: str(e.block_timestamp),
    block_time: String(BigInt(e.block_timestamp) * 1_000_000n),
    block_hash: e.block_hash,
    transaction_hash: e.transaction_hash,
    transaction_index: str(e.transaction_index),
    log_index: str(e.log_index),
    address: e.address,
    topic0: e.topics[0] ?? null,
    topic1: e.topics[1] ?? null,
    topic2: e.topics[2] ?? null,
    topic3: e.topics[3] ?? null,
    data: e.data,
    event_signature: 'Transfer(address,address,uint256)',
    arg_from: args?.args.from ?? null,
    arg_to: args?.args.to ?? null,
    arg_value: args?.args.value ?? null,
    decode_status: 'ok',
  };
}

/** Exact sum of decimal strings (uint256 does not fit a double). */
export function sumDecimal(values: Iterable<string | null>): bigint {
  let s = 0n;
  for (const v of values) if (v !== null) s += BigInt(v);
  return s;
}

/** Unix seconds of a UTC date `YYYY-MM-DD`. */
export function unixDay(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / 1000;
}

/** Every n-th element plus the first and last: a spread sample for field-by-field checks. */
export function spreadSample<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  const step = (items.length - 1) / (count - 1);
  return Array.from({ length: count }, (_, i) => items[Math.round(i * step)]!);
}

// ------------------------------------------------------------------ request recording

export interface RecordingProxy {
  /** Base URL to use instead of the target's (same path prefix). */
  url: string;
  /** Every request path+query forwarded, in arrival order. */
  requests: URL[];
  /** performance.now() at each request's arrival (same order). */
  arrivals: number[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of a sandbox that records each request URL and its arrival, so a
 * test can see which windows (filter_* bounds) a run asked for and when; `delayMs` holds chosen
 * requests that long before forwarding them; `onRequest` sees each request before it is forwarded.
 */
export async function startRecordingProxy(
  targetBaseUrl: string,
  opts: { delayMs?: (url: URL) => number; onRequest?: (url: URL) => void } = {},
): Promise<RecordingProxy> {
  const target = new URL(targetBaseUrl);
  const requests: URL[] = [];
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', target.origin);
    requests.push(url);
    arrivals.push(performance.now());
    opts.onRequest?.(url);
    const delay = opts.delayMs?.(url) ?? 0;
    if (delay > 0) req.pause();
    setTimeout(() => forward(req, res), delay);
  });
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    requests,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
