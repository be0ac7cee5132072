/**
 * Issue 3: the Parquet files the PIPELINE writes (partitioned, several per table, decoded columns)
 * with either engine (--parquet-engine duckdb | hyparquet) read correctly in DuckDB and pyarrow,
 * with the column types the column model documents (src/datasets + src/sink/column-types.ts), and
 * both engines' files hold the same rows.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Column } from '../../src/columns/columns.js';
import { eventsDataset, eventTableForSignature } from '../../src/datasets/events.js';
import { transactionsDataset } from '../../src/datasets/transactions.js';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import { createTransactionDecoder } from '../../src/decode/transaction-decoder.js';
import { parquetColumnTypes, type ParquetColumnType } from '../../src/sink/index.js';
import {
  describeColumns,
  duckdb,
  exportJob,
  listFiles,
  readTable,
  tableSource,
  truthContractEvents,
  truthWalletTransactions,
  unixDay,
  type CanonRow,
} from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { readWithPyarrow, type PyarrowFile } from '../sink/readers.js';

const sandbox = useSandbox({ seed: 42, transactions: 20_000 });

const ENGINES = ['duckdb', 'hyparquet'] as const;
const CHAINS = [1, 8453, 42161];
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TABLES = ['transactions', eventTableForSignature(TRANSFER)] as const;
const RANGE = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-04') };

/** pyarrow's Arrow type for each DuckDB type of the model. */
const ARROW_TYPE: Record<ParquetColumnType['duckdbType'], string> = {
  INTEGER: 'int32',
  BIGINT: 'int64',
  VARCHAR: 'string',
  BOOLEAN: 'bool',
  'TIMESTAMP WITH TIME ZONE': 'timestamp[us, tz=UTC]',
  DATE: 'date32[day]',
};

/** The documented columns of each table for this job (decode: true). */
function modelColumns(table: (typeof TABLES)[number]): Column[] {
  if (table === 'transactions') {
    return transactionsDataset.columns({ kind: 'wallet', address: '0x', label: '', decode: true, decoder: createTransactionDecoder({}) });
  }
  const signature = parseEventSignature(TRANSFER);
  return eventsDataset.columns({
    kind: 'contract',
    address: '0x',
    signature,
    decode: true,
    decoder: createEventDecoder(signature, { preferService: true }),
  });
}

const tmp = useTempDir('e2e-engines-');
const roots: Record<string, string> = {};
let pyarrow: Record<string, PyarrowFile>;

beforeAll(async () => {
  const tokens = sandbox.data.contracts.filter((c) => c.symbol === 'SUSD');
  for (const engine of ENGINES) {
    const dir = join(tmp.dir, engine);
    const report = await exportJob({
      job: {
        name: 'engines',
        source: { base_url: 'sandbox', chains: CHAINS },
        targets: [
          { wallet: 'alice.eth', datasets: ['transactions'] },
          ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
        ],
        range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
        decode: true,
      },
      dir,
      sandbox,
      destination: join(dir, 'out'),
      flags: { parquetEngine: engine },
    });
    expect(report.status).toBe('succeeded');
    roots[engine] = join(dir, 'out');
  }
  const files = ENGINES.flatMap((e) =>
    listFiles(roots[e]!)
      .filter((f) => f.endsWith('.parquet'))
      .map((f) => join(roots[e]!, f)),
  );
  pyarrow = readWithPyarrow(files);
});

function parquetFiles(engine: string, table: string): string[] {
  return listFiles(roots[engine]!)
    .filter((f) => f.startsWith(`${table}/`) && f.endsWith('.parquet'))
    .map((f) => join(roots[engine]!, f));
}

function sortById(rows: CanonRow[]): CanonRow[] {
  return [...rows].sort((a, b) => ((a.item_id as string) < (b.item_id as string) ? -1 : 1));
}

describe.each(ENGINES)('%s engine, as written by a run', (engine) => {
  describe.each(TABLES)('table %s', (table) => {
    it('DuckDB sees the documented columns, in order, with the documented types', async () => {
      const got = await describeColumns(tableSource(roots[engine]!, table, 'parquet'));
      const want = parquetColumnTypes(modelColumns(table)).map((t) => ({ name: t.name, type: t.duckdbType }));
      expect(got).toEqual(want);
    });

    it('every file declares the documented physical and converted types, all OPTIONAL (DuckDB parquet_schema)', async () => {
      const want = parquetColumnTypes(modelColumns(table));
      const files = parquetFiles(engine, table);
      expect(files).toHaveLength(9);
      for (const file of files) {
        const schema = await duckdb(
          `SELECT name, type, converted_type, repetition_type FROM parquet_schema('${file}') WHERE type IS NOT NULL`,
        );
        expect(schema.map((s) => s.name)).toEqual(want.map((t) => t.name));
        for (const t of want) {
          const s = schema.find((x) => x.name === t.name)!;
          expect({ type: s.type, converted: s.converted_type ?? null, repetition: s.repetition_type }, `${file} ${t.name}`).toEqual({
            type: t.physicalType,
            converted: t.convertedType,
            repetition: 'OPTIONAL',
          });
        }
      }
    });

    it('pyarrow reads every file with the documented physical, converted and Arrow types', () => {
      const want = parquetColumnTypes(modelColumns(table));
      for (const file of parquetFiles(engine, table)) {
        const fields = pyarrow[file]!.fields;
        expect(Object.keys(fields)).toEqual(want.map((t) => t.name));
        for (const t of want) {
          const f = fields[t.name]!;
          expect(f.physical, t.name).toBe(t.physicalType);
          expect(f.converted, t.name).toBe(t.convertedType ?? 'NONE');
          expect(f.arrow, t.name).toBe(ARROW_TYPE[t.duckdbType]);
          expect(f.max_definition_level, t.name).toBe(1);
        }
      }
    });

    it('pyarrow reads the same values as DuckDB, and the number of rows the sandbox holds', async () => {
      const viaDuck = sortById(await readTable(roots[engine]!, table, 'parquet'));
      const viaArrow = sortById(parquetFiles(engine, table).flatMap((f) => pyarrow[f]!.rows));
      const alice = sandbox.data.wallet('alice.eth')!.address;
      const truth =
        table === 'transactions'
          ? truthWalletTransactions(sandbox.data, alice, CHAINS, RANGE).length
          : sandbox.data.contracts
              .filter((c) => c.symbol === 'SUSD')
              .reduce((n, t) => n + truthContractEvents(sandbox.data, t.address, TRANSFER, [t.chainId], RANGE).length, 0);
      expect(viaDuck).toHaveLength(truth);
      expect(viaArrow).toHaveLength(truth);
      for (let i = 0; i < viaDuck.length; i++) expect(viaArrow[i], `row ${i}`).toEqual(viaDuck[i]);
    });
  });

  it('pyarrow reads a whole table folder as a Hive dataset (typed partition schema)', () => {
    // pq.read_table(folder) infers chain_id=<n> as dictionary<int32>, which clashes with the file's
    // int64 chain_id; a partition schema with the file's type reads the folder.
    const script = `
import sys, json, pyarrow as pa, pyarrow.parquet as pq, pyarrow.dataset as ds, pyarrow.compute as pc
part = ds.partitioning(pa.schema([('chain_id', pa.int64()), ('date', pa.string())]), flavor='hive')
t = pq.read_table(sys.argv[1], partitioning=part)
days = pc.strftime(t.column('block_time'), format='%Y-%m-%d', locale='C').to_pylist()
print(json.dumps({"rows": t.num_rows, "chains": sorted(set(t.column('chain_id').to_pylist())),
  "date_matches": all(a == b for a, b in zip(days, t.column('date').to_pylist()))}))
`;
    const out = JSON.parse(execFileSync('python3', ['-c', script, join(roots[engine]!, 'transactions')], { encoding: 'utf8' })) as {
      rows: number;
      chains: number[];
      date_matches: boolean;
    };
    const alice = sandbox.data.wallet('alice.eth')!.address;
    expect(out.rows).toBe(truthWalletTransactions(sandbox.data, alice, CHAINS, RANGE).length);
    expect(out.chains).toEqual(CHAINS);
    expect(out.date_matches).toBe(true);
  });
});

it('both engines write the same rows', async () => {
  for (const table of TABLES) {
    const [a, b] = await Promise.all(ENGINES.map(async (e) => sortById(await readTable(roots[e]!, table, 'parquet'))));
    expect(a!.length).toBeGreaterThan(0);
    expect(b).toEqual(a);
  }
});
