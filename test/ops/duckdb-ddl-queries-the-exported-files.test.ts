/**
 * `insight-export ddl --dialect duckdb` run against a real export (Parquet and NDJSON): DuckDB
 * executes the statements as printed, and the views return exactly the source's rows, with the
 * column model's types, partition pruning by chain_id/date and exact uint256 strings.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsDataset } from '../../src/datasets/events.js';
import { transactionsDataset } from '../../src/datasets/transactions.js';
import { loadJob } from '../../src/job/index.js';
import { TargetFactory } from '../../src/run/targets.js';
import { jobStreams } from '../../src/plan/streams.js';
import { duckdbType } from '../../src/sink/column-types.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { baseEnv, runCli, runJobAgainst, writeAndLoadJob } from './helpers.js';

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const CHAINS = [1, 8453];
const FROM = Date.parse('2024-02-01T00:00:00Z') / 1000;
const TO = Date.parse('2024-02-04T00:00:00Z') / 1000;

const sandbox = useSandbox();
const tmp = useTempDir('ops-ddl-');
let db: DuckDBInstance;

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:', { threads: '1' });
});
afterAll(async () => {
  db?.closeSync();
});

async function rows(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}

function truth() {
  const wallet = sandbox.data.wallets[0]!.address;
  const tokens = sandbox.data.contracts.filter((c) => c.kind === 'erc20' && c.symbol === 'SUSD' && CHAINS.includes(c.chainId));
  const filters = `filter_block_timestamp_gte=${FROM}&filter_block_timestamp_lt=${TO}`;
  const txs = sandbox.data.allWalletTransactions(wallet, sandbox.data.parseTransactionsQuery(`chain_id=${CHAINS.join(',')}&${filters}`));
  const events = tokens.flatMap((t) =>
    sandbox.data.allContractEvents(t.address, TRANSFER, sandbox.data.parseEventsQuery(`chain_id=${t.chainId}&${filters}`)),
  );
  return { wallet, tokens, txs, events };
}

describe.each(['parquet', 'ndjson'] as const)('DuckDB DDL over a %s export', (format) => {
  let conn: DuckDBConnection;
  let jobFile: string;
  let out: string;
  let ddl: string;

  beforeAll(async () => {
    const { wallet, tokens } = truth();
    out = join(tmp.dir, format, 'out');
    jobFile = join(tmp.dir, format, 'ddl-job.yaml');
    await rm(join(tmp.dir, format), { recursive: true, force: true });
    await mkdir(join(tmp.dir, format), { recursive: true });
    const job = await writeAndLoadJob(jobFile, {
      name: `ddl-${format}`,
      source: { base_url: 'sandbox', chains: CHAINS },
      targets: [
        { wallet, datasets: ['transactions'] },
        ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
      ],
      range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
      output: { format, destination: out },
    });
    const report = await runJobAgainst(job, sandbox.url);
    expect(report.status).toBe('succeeded');

    const res = await runCli(['ddl', jobFile, '--dialect', 'duckdb'], baseEnv());
    expect(res.code, res.stderr).toBe(0);
    ddl = res.stdout;
    conn = await db.connect();
    await conn.run(`CREATE SCHEMA s_${format}; SET search_path = 's_${format}'; SET TimeZone = 'UTC';`);
    await conn.run(ddl);
  }, 120_000);

  afterAll(() => conn?.closeSync());

  it('creates one view per table, typed like the column model, with date as a DATE partition column', async () => {
    const job = await loadJob(jobFile);
    const factory = new TargetFactory(job);
    const specs = jobStreams(job);
    const wallet = await factory.forDataset(specs.find((s) => s.dataset === 'transactions')!);
    const event = await factory.forDataset(specs.find((s) => s.dataset === 'events')!);
    const expected = [
      { table: 'transactions', columns: transactionsDataset.columns(wallet as never) },
      { table: eventsDataset.tableName(event as never), columns: eventsDataset.columns(event as never) },
    ];
    const views = (await rows(conn, `SELECT view_name FROM duckdb_views() WHERE schema_name = 's_${format}' ORDER BY 1`)).map(
      (r) => r.view_name,
    );
    expect(views).toEqual(expected.map((e) => e.table).sort());
    for (const e of expected) {
      const described = (await rows(conn, `DESCRIBE "${e.table}"`)).map((r) => [r.column_name, r.column_type]);
      expect(described).toEqual([...e.columns.map((c) => [c.name, duckdbType(c)]), ['date', 'DATE']]);
    }
    const statements = ddl
      .split('\n')
      .filter((l) => !l.startsWith('--'))
      .join('\n');
    expect(statements).not.toMatch(/DECIMAL|HUGEINT/i);
  });

  it('returns every source row once, with exact uint256 strings', async () => {
    const t = truth();
    const txRows = await rows(conn, 'SELECT item_id, "value" FROM transactions');
    expect(txRows.length).toBe(t.txs.length);
    const byId = new Map(txRows.map((r) => [r.item_id as string, r.value as string]));
    expect(byId.size).toBe(t.txs.length);
    for (const tx of t.txs) expect(byId.get(`${tx.chain_id}:${tx.hash}:${t.wallet}`)).toBe(tx.value);
    expect(t.txs.some((tx) => tx.value.length > 18)).toBe(true);

    const evRows = await rows(conn, `SELECT item_id, arg_value FROM ${eventTableForSignature(TRANSFER)}`);
    expect(evRows.length).toBe(t.events.length);
    expect(new Set(evRows.map((r) => r.item_id)).size).toBe(t.events.length);
    const args = new Map(evRows.map((r) => [r.item_id as string, r.arg_value as string]));
    for (const e of t.events)
      expect(args.get(`${e.chain_id}:${e.transaction_hash}:${e.log_index}`)).toBe(
        sandbox.data.logArgs(e.chain_id, e.transaction_hash)?.args.value,
      );
  });

  it('partition columns agree with the rows and prune files', async () => {
    const t = truth();
    const mismatched = await rows(
      conn,
      `SELECT count(*)::INTEGER AS n FROM transactions WHERE "date" <> CAST(block_time AS DATE) OR epoch(block_time) <> block_timestamp`,
    );
    expect(mismatched[0]!.n).toBe(0);
    const day = Date.parse('2024-02-02T00:00:00Z') / 1000;
    const want = t.txs.filter((x) => x.chain_id === 8453 && x.block_timestamp >= day && x.block_timestamp < day + 86_400).length;
    expect(want).toBeGreaterThan(0);
    const sql = `SELECT count(*)::INTEGER AS n FROM transactions WHERE chain_id = 8453 AND "date" = DATE '2024-02-02'`;
    expect((await rows(conn, sql))[0]!.n).toBe(want);
    const plan = (await rows(conn, `EXPLAIN ${sql}`)).map((r) => String(r.explain_value)).join('\n');
    const scanned = /Scanning Files: (\d+)\/(\d+)/.exec(plan);
    expect(scanned, plan).not.toBeNull();
    expect(Number(scanned![1])).toBe(1);
    expect(Number(scanned![2])).toBeGreaterThan(1);
  });
});
