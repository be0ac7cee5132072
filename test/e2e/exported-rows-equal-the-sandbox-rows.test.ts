/**
 * Issue 3: for each dataset the rows exported by a whole run, read back with DuckDB, are exactly
 * the rows the sandbox holds for the job's query — count, item_id set, exact sums, every row field
 * by field and the Hive partition of every file — for local Parquet, local NDJSON.gz and S3.
 */
import { join } from 'node:path';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord, TransactionRecord } from '../../src/source/records.js';
import {
  downloadPrefix,
  duckdb,
  expectedTransactionRow,
  expectedTransferRow,
  exportJob,
  listFiles,
  readTable,
  sumDecimal,
  tableSource,
  truthContractEvents,
  truthWalletTransactions,
  unixDay,
  type CanonRow,
  type OutputFormat,
} from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { completedWindows } from '../helpers/completed-windows.js';

const sandbox = useSandbox({ seed: 42, transactions: 20_000 });
const bucket = useTestBucket('e2e-rows');

const CHAINS = [1, 8453, 42161];
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const EVENTS_TABLE = eventTableForSignature(TRANSFER);
const RANGE = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-04') };

const tmp = useTempDir('e2e-rows-');
// The AWS SDK reads the credentials from the environment (its default chain), as in production.
const s3Env = useS3CredentialsInEnv();

function alice() {
  return sandbox.data.wallet('alice.eth')!;
}

/** SUSD on every chain (a different address per chain). */
function tokens() {
  return sandbox.data.contracts.filter((c) => c.symbol === 'SUSD');
}

function job(name: string, decode: boolean) {
  return {
    name,
    source: { base_url: 'sandbox', chains: CHAINS },
    targets: [
      // By name: the run resolves it once; rows and keys carry the address.
      { wallet: 'alice.eth', datasets: ['transactions'] },
      ...tokens().map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
    ],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
    decode,
  };
}

function truthTransactions(): TransactionRecord[] {
  return truthWalletTransactions(sandbox.data, alice().address, CHAINS, RANGE);
}

function truthEvents(): EventRecord[] {
  return tokens().flatMap((t) => truthContractEvents(sandbox.data, t.address, TRANSFER, [t.chainId], RANGE));
}

/**
 * Decoded-transaction columns the sandbox's own call arguments imply (decode: true): calls to the
 * contract without a registry ABI stay undecoded ('no_abi'), as the service leaves them.
 */
function withDecodedCall(row: CanonRow, t: TransactionRecord): CanonRow {
  const withoutAbi = t.to_address !== null && sandbox.data.contract(t.to_address)?.kind === 'unknown';
  const call = withoutAbi ? null : sandbox.data.transactionArgs(t.chain_id, t.hash);
  return {
    ...row,
    decoded_function_name: call?.name ?? null,
    decoded_signature: call?.signature ?? null,
    decoded_inputs_json: call ? JSON.stringify(call.args) : null,
    decode_status: call ? 'ok' : t.data === '0x' ? 'no_calldata' : 'no_abi',
  };
}

function byId(rows: CanonRow[]): Map<string, CanonRow> {
  return new Map(rows.map((r) => [r.item_id as string, r]));
}

/** decoded_inputs_json is compared as JSON (key order and spacing are not part of the contract). */
function normaliseJsonColumns(row: CanonRow): CanonRow {
  const out = { ...row };
  if (typeof out.decoded_inputs_json === 'string') out.decoded_inputs_json = JSON.stringify(JSON.parse(out.decoded_inputs_json));
  return out;
}

async function checkTable(root: string, table: string, format: OutputFormat, expected: CanonRow[], uintColumn: string) {
  const got = await readTable(root, table, format);
  // count and key
  expect(got.length).toBe(expected.length);
  const gotIds = got.map((r) => r.item_id as string);
  expect(new Set(gotIds).size).toBe(got.length);
  expect(new Set(gotIds)).toEqual(new Set(expected.map((r) => r.item_id as string)));

  // exact sums computed by DuckDB over the files (uint256 as HUGEINT, never a double)
  const source = tableSource(root, table, format);
  const [sums] = await duckdb(
    `SELECT CAST(sum(CAST(${uintColumn} AS HUGEINT)) AS VARCHAR) AS uint_sum, CAST(sum(block_number) AS VARCHAR) AS blocks,
            CAST(sum(block_timestamp) AS VARCHAR) AS times, count(DISTINCT item_id) AS ids FROM ${source}`,
  );
  expect(BigInt(sums!.uint_sum as string)).toBe(sumDecimal(expected.map((r) => r[uintColumn] as string | null)));
  expect(BigInt(sums!.blocks as string)).toBe(sumDecimal(expected.map((r) => r.block_number as string)));
  expect(BigInt(sums!.times as string)).toBe(sumDecimal(expected.map((r) => r.block_timestamp as string)));
  expect(Number(sums!.ids)).toBe(expected.length);

  // every row, every field (and no column more or less)
  const want = byId(expected);
  for (const row of got) expect(normaliseJsonColumns(row)).toEqual(normaliseJsonColumns(want.get(row.item_id as string)!));

  // every file sits in the partition of its rows: chain_id=<chain>/date=<UTC day of block_timestamp>
  const ext = format === 'parquet' ? 'parquet' : 'ndjson.gz';
  const fn = format === 'parquet' ? 'read_parquet' : 'read_json';
  const [misplaced] = await duckdb(
    `SELECT count(*) AS n FROM ${fn}('${root}/${table}/**/*.${ext}', filename = true, hive_partitioning = false)
     WHERE regexp_extract(filename, '/chain_id=([0-9]+)/', 1) <> CAST(chain_id AS VARCHAR)
        OR regexp_extract(filename, '/date=([0-9-]+)/', 1) <> strftime(make_timestamp(block_timestamp * 1000000), '%Y-%m-%d')`,
  );
  expect(Number(misplaced!.n)).toBe(0);
}

interface Case {
  name: string;
  destination: 'local' | 's3';
  format: OutputFormat;
  engine?: 'duckdb' | 'hyparquet';
  decode: boolean;
}

const CASES: Case[] = [
  { name: 'local Parquet (DuckDB engine)', destination: 'local', format: 'parquet', engine: 'duckdb', decode: false },
  { name: 'local NDJSON.gz', destination: 'local', format: 'ndjson', decode: false },
  { name: 'S3 Parquet (hyparquet engine), decoded', destination: 's3', format: 'parquet', engine: 'hyparquet', decode: true },
  { name: 'S3 NDJSON.gz, decoded', destination: 's3', format: 'ndjson', decode: true },
];

describe.each(CASES)('a run to $name', (c) => {
  let root: string;

  beforeAll(async () => {
    const dir = join(tmp.dir, c.name.replace(/[^a-z0-9]+/gi, '-'));
    const prefix = `runs/${c.name.replace(/[^a-z0-9]+/gi, '-')}`;
    const destination = c.destination === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`;
    const report = await exportJob({
      job: job('e2e-rows', c.decode),
      dir,
      sandbox,
      destination,
      env: c.destination === 's3' ? s3Env : {},
      flags: { format: c.format, ...(c.engine ? { parquetEngine: c.engine } : {}) },
    });
    expect(report.status).toBe('succeeded');
    expect(report.windows.failed).toBe(0);
    expect(report.rows).toBe(truthTransactions().length + truthEvents().length);
    if (c.destination === 'local') {
      root = join(dir, 'out');
    } else {
      root = join(dir, 'downloaded');
      const keys = await downloadPrefix(bucket.client, bucket.bucket, prefix, root);
      expect(keys.some((k) => k.startsWith('_state/e2e-rows/units/'))).toBe(true);
    }
  });

  it('wallet transactions: same count, item_ids, sums and rows as the sandbox', async () => {
    const truth = truthTransactions();
    expect(truth.length).toBeGreaterThan(1000);
    const expected = truth.map((t) => {
      const row = expectedTransactionRow(t, alice().address);
      return c.decode ? withDecodedCall(row, t) : row;
    });
    await checkTable(root, 'transactions', c.format, expected, 'value');
  });

  it('contract events: same count, item_ids, sums and rows as the sandbox', async () => {
    const truth = truthEvents();
    expect(truth.length).toBeGreaterThan(100);
    await checkTable(
      root,
      EVENTS_TABLE,
      c.format,
      truth.map((e) => expectedTransferRow(e, sandbox.data)),
      'arg_value',
    );
  });

  it('writes one file per window and chain, and nothing but data and state', async () => {
    const files = listFiles(root).filter((f) => !f.startsWith('.insight-export-tmp/'));
    const ext = c.format === 'parquet' ? '.parquet' : '.ndjson.gz';
    const data = files.filter((f) => !f.startsWith('_state/'));
    expect(data.every((f) => f.endsWith(ext))).toBe(true);
    // 3 days x 3 chains, for each of the two tables
    expect(data.filter((f) => f.startsWith('transactions/'))).toHaveLength(9);
    expect(data.filter((f) => f.startsWith(`${EVENTS_TABLE}/`))).toHaveLength(9);
    expect(await completedWindows(root, 'e2e-rows')).toHaveLength(18);
    expect(files.filter((f) => f.startsWith('_state/e2e-rows/completed/'))).toHaveLength(0);
    expect(files.filter((f) => f.startsWith('_state/e2e-rows/pending/'))).toHaveLength(0);
  });
});
