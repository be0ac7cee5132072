import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFileWriter, type Compression, type FinishedFile } from '../../src/sink/index.js';
import { edgeColumns, edgeRows, makeTransactionRows, transactionColumns } from './fixtures.js';
import { canonicalInput, expectedMicros, readNdjsonLines, readNdjsonWithDuckDB } from './readers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('sink-ndjson-');
const tx = makeTransactionRows(1500);
const files = new Map<string, FinishedFile>();

async function writeNdjson(name: string, compression: Compression, columns = transactionColumns, rows = tx, level?: number) {
  const writer = await createFileWriter({ format: 'ndjson', compression, columns, stagingDir: tmp.dir, compressionLevel: level });
  for (let at = 0; at < rows.length; at += 400) await writer.write(rows.slice(at, at + 400));
  files.set(name, await writer.finish());
}

beforeAll(async () => {
  await writeNdjson('gzip', 'gzip');
  await writeNdjson('none', 'none');
  await writeNdjson('gzip level 1', 'gzip', transactionColumns, tx, 1);
  await writeNdjson('edge gzip', 'gzip', edgeColumns, edgeRows);
  // Extra keys in the input rows are not columns: they must not appear in the file.
  await writeNdjson(
    'extra keys',
    'none',
    edgeColumns,
    edgeRows.map((r) => ({ ...r, not_a_column: 'x', __proto_like: 1 })),
  );
});

describe('NDJSON writer', () => {
  it('names files by compression and reports rows and exact bytes', () => {
    expect(files.get('gzip')!.extension).toBe('.ndjson.gz');
    expect(files.get('none')!.extension).toBe('.ndjson');
    for (const f of files.values()) {
      expect(f.path.endsWith(f.extension)).toBe(true);
      expect(f.bytes).toBe(readFileSync(f.path).length);
    }
    expect(files.get('gzip')!.rows).toBe(tx.length);
  });

  it('writes one object per line with exactly the declared columns in declared order', () => {
    for (const name of ['gzip', 'none', 'gzip level 1']) {
      const lines = readNdjsonLines(files.get(name)!.path);
      expect(lines.length).toBe(tx.length);
      for (const line of lines) expect(line.keys).toEqual(transactionColumns.map((c) => c.name));
    }
    for (const line of readNdjsonLines(files.get('extra keys')!.path)) expect(line.keys).toEqual(edgeColumns.map((c) => c.name));
  });

  it('keeps every value as the column model says (numbers, exact uint256 strings, ISO times, JSON text as a string)', () => {
    const lines = readNdjsonLines(files.get('none')!.path);
    lines.forEach((line, i) => {
      for (const c of transactionColumns) expect(line.value[c.name], `row ${i} ${c.name}`).toEqual(tx[i]![c.name] ?? null);
    });
  });

  it('writes missing keys as null and lone surrogates as U+FFFD', () => {
    const lines = readNdjsonLines(files.get('edge gzip')!.path);
    const missing = lines[edgeRows.length - 1]!.value;
    for (const c of edgeColumns) if (c.name !== 'required_s') expect(missing[c.name], c.name).toBeNull();
    expect(lines[1]!.value.s).toBe('lone \ufffd surrogate');
    expect(lines[0]!.value.s).toBe('nul \u0000 inside');
  });

  it('is read back identically by DuckDB read_json with the declared types (gzip and plain)', async () => {
    for (const [name, columns, rows] of [
      ['gzip', transactionColumns, tx],
      ['none', transactionColumns, tx],
      ['edge gzip', edgeColumns, edgeRows],
    ] as const) {
      const back = await readNdjsonWithDuckDB(files.get(name)!.path, columns);
      const want = canonicalInput(rows, columns);
      expect(back.length).toBe(want.length);
      back.forEach((r, i) => expect(r, `${name} row ${i}`).toEqual(want[i]));
    }
  });

  it('compresses: gzip is one valid member far smaller than plain, and level 1 trades size for speed', () => {
    const plain = readFileSync(files.get('none')!.path);
    const gz = readFileSync(files.get('gzip')!.path);
    expect(gunzipSync(gz).equals(plain)).toBe(true);
    expect(gz.length).toBeLessThan(plain.length / 2);
    const fast = readFileSync(files.get('gzip level 1')!.path);
    expect(gunzipSync(fast).equals(plain)).toBe(true);
    expect(fast.length).toBeGreaterThan(gz.length);
  });

  it('keeps timestamps parseable to the same instant', () => {
    const lines = readNdjsonLines(files.get('none')!.path);
    for (const { value } of lines) {
      expect(expectedMicros(value.block_time as string)).toBe(String(BigInt(value.block_timestamp as number) * 1_000_000n));
    }
  });

  it('leaves only the finished files in the staging directory', () => {
    expect(readdirSync(tmp.dir).sort()).toEqual([...files.values()].map((f) => f.path.slice(tmp.dir.length + 1)).sort());
  });
});
