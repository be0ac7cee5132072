import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDuckDB, createFileWriter, parquetColumnTypes, type FinishedFile, type ParquetEngine } from '../../src/sink/index.js';
import { transactionColumns } from './fixtures.js';
import {
  duckdbParquetSchema,
  readWithDuckDB,
  readWithHyparquet,
  readWithParquetWasm,
  readWithPyarrow,
  type PyarrowFile,
} from './readers.js';
import { useTempDir } from '../helpers/temp-dir.js';

/** A window with no rows still produces a file: a valid, empty file that carries the schema. */
const tmp = useTempDir('sink-empty-');
const parquet = new Map<ParquetEngine, FinishedFile>();
let pyarrow: Record<string, PyarrowFile>;

beforeAll(async () => {
  for (const engine of ['duckdb', 'hyparquet'] as const) {
    const writer = await createFileWriter({ format: 'parquet', parquetEngine: engine, columns: transactionColumns, stagingDir: tmp.dir });
    await writer.write([]);
    parquet.set(engine, await writer.finish());
  }
  pyarrow = readWithPyarrow([...parquet.values()].map((f) => f.path));
});

afterAll(async () => {
  await closeDuckDB();
});

describe.each(['duckdb', 'hyparquet'] as const)('empty Parquet file (%s engine)', (engine) => {
  const file = () => parquet.get(engine)!;

  it('reports 0 rows', () => {
    expect(file().rows).toBe(0);
    expect(file().bytes).toBe(readFileSync(file().path).length);
  });

  it('has 0 rows and every column for all four readers', async () => {
    expect(await readWithDuckDB(file().path, transactionColumns)).toEqual([]);
    expect(await readWithHyparquet(file().path, transactionColumns)).toEqual([]);
    expect(readWithParquetWasm(file().path, transactionColumns)).toEqual([]);
    const py = pyarrow[file().path]!;
    expect(py.rows).toEqual([]);
    expect(Object.keys(py.fields)).toEqual(transactionColumns.map((c) => c.name));
  });

  it('keeps the column types', async () => {
    const py = pyarrow[file().path]!;
    const schema = await duckdbParquetSchema(file().path);
    for (const t of parquetColumnTypes(transactionColumns)) {
      expect(py.fields[t.name]!.physical, t.name).toBe(t.physicalType);
      expect(schema[t.name]!.converted, t.name).toBe(t.convertedType);
    }
    expect(py.fields.block_time!.arrow).toBe('timestamp[us, tz=UTC]');
  });
});

describe('empty NDJSON file', () => {
  it('is an empty (valid) gzip stream or an empty file', async () => {
    for (const compression of ['gzip', 'none'] as const) {
      const writer = await createFileWriter({ format: 'ndjson', compression, columns: transactionColumns, stagingDir: tmp.dir });
      const file = await writer.finish();
      expect(file.rows).toBe(0);
      const bytes = readFileSync(file.path);
      expect(compression === 'gzip' ? gunzipSync(bytes).length : bytes.length).toBe(0);
    }
  });
});
