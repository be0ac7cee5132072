import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDuckDB, createFileWriter, FileWriterStateError } from '../../src/sink/index.js';
import { makeTransactionRows, transactionColumns } from './fixtures.js';
import { readWithDuckDB } from './readers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('sink-duckdb-queue-');
afterAll(async () => {
  await closeDuckDB();
});

describe('DuckDB conversions', () => {
  it('finish() of several writers at once: every file complete (conversions queue, none runs out of memory)', async () => {
    const sets = [0, 1, 2, 3].map((k) => makeTransactionRows(2000 + k * 500, 100 + k, k * 10_000));
    const writers = await Promise.all(
      sets.map(() => createFileWriter({ format: 'parquet', columns: transactionColumns, stagingDir: tmp.dir })),
    );
    await Promise.all(writers.map((w, k) => w.write(sets[k]!)));
    const files = await Promise.all(writers.map((w) => w.finish()));
    for (let k = 0; k < sets.length; k++) {
      expect(files[k]!.rows).toBe(sets[k]!.length);
      const back = await readWithDuckDB(files[k]!.path, transactionColumns);
      expect(back.map((r) => r.item_id)).toEqual(sets[k]!.map((r) => r.item_id));
    }
    await Promise.all(writers.map((w) => w.abort()));
    expect(readdirSync(tmp.dir)).toEqual([]);
  });

  it('abort() of a writer whose conversion has not started: finish() rejects as aborted, nothing left', async () => {
    const writer = await createFileWriter({ format: 'parquet', columns: transactionColumns, stagingDir: tmp.dir });
    await writer.write(makeTransactionRows(500));
    const finishing = writer.finish();
    await writer.abort();
    await expect(finishing).rejects.toBeInstanceOf(FileWriterStateError);
    expect(readdirSync(tmp.dir)).toEqual([]);
  });
});
