import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Column, Row } from '../../src/columns/columns.js';
import {
  closeDuckDB,
  createFileWriter,
  parquetColumnTypes,
  type Compression,
  type FinishedFile,
  type ParquetEngine,
} from '../../src/sink/index.js';
import { edgeColumns, edgeRows, makeTransactionRows, MAX_UINT256, transactionColumns } from './fixtures.js';
import {
  canonicalInput,
  duckdbParquetSchema,
  readWithDuckDB,
  readWithHyparquet,
  readWithParquetWasm,
  readWithPyarrow,
  type CanonRow,
  type PyarrowFile,
} from './readers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ENGINES: ParquetEngine[] = ['duckdb', 'hyparquet'];
const COMPRESSIONS: Compression[] = ['zstd', 'snappy', 'gzip', 'none'];
const ROW_GROUP_SIZE = 1000;

interface DataSet {
  name: string;
  columns: Column[];
  rows: Row[];
}

const DATA_SETS: DataSet[] = [
  { name: 'transactions', columns: transactionColumns, rows: makeTransactionRows(2500) },
  { name: 'edge values', columns: edgeColumns, rows: edgeRows },
];

interface Written {
  set: DataSet;
  engine: ParquetEngine;
  compression: Compression;
  file: FinishedFile;
}

/** What each column type must look like in the file, per the column model (columns.ts). */
const EXPECTED_TYPES: Record<Column['type'], { physical: string; logical: RegExp; converted: string; arrow: string }> = {
  int32: { physical: 'INT32', logical: /^Int\(bitWidth=32, isSigned=true\)$/, converted: 'INT_32', arrow: 'int32' },
  int64: { physical: 'INT64', logical: /^Int\(bitWidth=64, isSigned=true\)$/, converted: 'INT_64', arrow: 'int64' },
  uint256: { physical: 'BYTE_ARRAY', logical: /^String$/, converted: 'UTF8', arrow: 'string' },
  string: { physical: 'BYTE_ARRAY', logical: /^String$/, converted: 'UTF8', arrow: 'string' },
  json: { physical: 'BYTE_ARRAY', logical: /^String$/, converted: 'UTF8', arrow: 'string' },
  bool: { physical: 'BOOLEAN', logical: /^None$/, converted: 'NONE', arrow: 'bool' },
  timestamp: {
    physical: 'INT64',
    logical: /^Timestamp\(isAdjustedToUTC=true, timeUnit=microseconds/,
    converted: 'TIMESTAMP_MICROS',
    arrow: 'timestamp[us, tz=UTC]',
  },
  date: { physical: 'INT32', logical: /^Date$/, converted: 'DATE', arrow: 'date32[day]' },
};

const tmp = useTempDir('sink-round-trip-');
const written: Written[] = [];
let pyarrow: Record<string, PyarrowFile>;

beforeAll(async () => {
  for (const set of DATA_SETS) {
    for (const engine of ENGINES) {
      for (const compression of COMPRESSIONS) {
        const writer = await createFileWriter({
          format: 'parquet',
          parquetEngine: engine,
          compression,
          columns: set.columns,
          stagingDir: tmp.dir,
          rowGroupSize: ROW_GROUP_SIZE,
        });
        // Pages of uneven sizes, so row groups and pages do not line up.
        for (let at = 0; at < set.rows.length; at += 333) await writer.write(set.rows.slice(at, at + 333));
        written.push({ set, engine, compression, file: await writer.finish() });
      }
    }
  }
  pyarrow = readWithPyarrow(written.map((w) => w.file.path));
});

afterAll(async () => {
  await closeDuckDB();
});

function expectSameRows(actual: CanonRow[], set: DataSet): void {
  const expected = canonicalInput(set.rows, set.columns);
  expect(actual.length).toBe(expected.length);
  // Row by row, so a failure names the first differing row instead of dumping 2500 rows.
  for (let i = 0; i < expected.length; i++) expect(actual[i], `row ${i}`).toEqual(expected[i]);
}

describe.each(DATA_SETS.map((s) => s.name))('%s', (setName) => {
  const cases = () => written.filter((w) => w.set.name === setName);
  const combos = ENGINES.flatMap((engine) => COMPRESSIONS.map((compression) => ({ engine, compression })));

  describe.each(combos)('$engine engine, $compression', ({ engine, compression }) => {
    const get = () => cases().find((w) => w.engine === engine && w.compression === compression)!;

    it('reports the rows and bytes of the finished file', () => {
      const w = get();
      expect(w.file.rows).toBe(w.set.rows.length);
      expect(w.file.bytes).toBeGreaterThan(0);
      expect(w.file.extension).toBe('.parquet');
      expect(w.file.path.startsWith(tmp.dir)).toBe(true);
    });

    it('reads back every value identically with DuckDB', async () => {
      const w = get();
      expectSameRows(await readWithDuckDB(w.file.path, w.set.columns), w.set);
    });

    it('reads back every value identically with hyparquet', async () => {
      const w = get();
      expectSameRows(await readWithHyparquet(w.file.path, w.set.columns), w.set);
    });

    it('reads back every value identically with parquet-wasm (arrow-rs)', () => {
      const w = get();
      expectSameRows(readWithParquetWasm(w.file.path, w.set.columns), w.set);
    });

    it('reads back every value identically with pyarrow', () => {
      const w = get();
      expectSameRows(pyarrow[w.file.path]!.rows, w.set);
    });

    it('declares the documented physical and logical types (pyarrow) and OPTIONAL columns', () => {
      const w = get();
      const fields = pyarrow[w.file.path]!.fields;
      expect(Object.keys(fields)).toEqual(w.set.columns.map((c) => c.name));
      for (const c of w.set.columns) {
        const want = EXPECTED_TYPES[c.type];
        const got = fields[c.name]!;
        expect(got.physical, c.name).toBe(want.physical);
        expect(got.logical, c.name).toMatch(want.logical);
        expect(got.converted, c.name).toBe(want.converted);
        expect(got.arrow, c.name).toBe(want.arrow);
        expect(got.max_definition_level, `${c.name} is OPTIONAL`).toBe(1);
      }
    });

    it('declares the same types in DuckDB parquet_schema() as parquetColumnTypes() says', async () => {
      const w = get();
      const schema = await duckdbParquetSchema(w.file.path);
      for (const t of parquetColumnTypes(w.set.columns)) {
        expect(schema[t.name], t.name).toEqual({ type: t.physicalType, converted: t.convertedType, repetition: 'OPTIONAL' });
      }
    });
  });
});

describe('transactions specifics', () => {
  const tx = () => written.filter((w) => w.set.name === 'transactions');

  it('keeps 78-digit uint256 strings exact (the max value is in the data)', () => {
    const rows = DATA_SETS[0]!.rows;
    expect(rows.some((r) => r.value === MAX_UINT256)).toBe(true);
    for (const w of tx()) {
      const back = pyarrow[w.file.path]!.rows;
      rows.forEach((r, i) => {
        if (r.value === MAX_UINT256) expect(back[i]!.value).toBe(MAX_UINT256);
      });
    }
  });

  it('stores block_time equal to block_timestamp unix seconds, and block_date as its UTC day', () => {
    for (const w of tx()) {
      for (const r of pyarrow[w.file.path]!.rows) {
        expect(BigInt(r.block_time as string)).toBe(BigInt(r.block_timestamp as string) * 1_000_000n);
        expect(r.block_date).toBe(new Date(Number(r.block_timestamp) * 1000).toISOString().slice(0, 10));
      }
    }
  });

  it('splits hyparquet files into row groups of the configured size', () => {
    for (const w of tx().filter((x) => x.engine === 'hyparquet')) {
      expect(pyarrow[w.file.path]!.num_row_groups).toBe(Math.ceil(2500 / ROW_GROUP_SIZE));
    }
  });

  it('writes files of similar size with both engines (same encoding choices)', () => {
    for (const compression of COMPRESSIONS) {
      const [a, b] = ENGINES.map((e) => tx().find((w) => w.engine === e && w.compression === compression)!.file.bytes);
      expect(Math.abs(a! - b!) / Math.max(a!, b!), compression).toBeLessThan(0.25);
    }
  });
});
