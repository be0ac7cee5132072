import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { column, type Column, type Row } from '../../src/columns/columns.js';
import { createNdjsonEncoder, wellFormed } from '../../src/sink/row-values.js';
import { InvalidRowValueError } from '../../src/sink/index.js';

/**
 * The encoder writes rows shaped like the datasets' (own keys = columns, in order) with
 * JSON.stringify and every other row column by column. Whatever the shape, the text must be what a
 * plain column-by-column encoding gives, and a value that does not fit must fail the same way.
 */
const COLUMNS: Column[] = [
  column('id', 'string', '', false),
  column('n', 'int64', ''),
  column('small', 'int32', ''),
  column('amount', 'uint256', ''),
  column('at', 'timestamp', ''),
  column('day', 'date', ''),
  column('flag', 'bool', ''),
  column('doc', 'json', ''),
];

/** The reference: every column in order, null for null/missing, strings made well-formed. */
function reference(rows: Row[]): string {
  return rows
    .map((row) => {
      const parts = COLUMNS.map((c) => {
        const v = row[c.name];
        const text =
          v === null || v === undefined
            ? 'null'
            : typeof v === 'string'
              ? JSON.stringify(c.type === 'string' || c.type === 'json' ? wellFormed(v) : v)
              : JSON.stringify(v);
        return `${JSON.stringify(c.name)}:${text}`;
      });
      return `{${parts.join(',')}}\n`;
    })
    .join('');
}

const text = fc.oneof(fc.string(), fc.constantFrom('\ud800', 'a\udc00b', '"quoted"\n\\', '0xABCdef', '𝄞 ok', '</script>'));
const values: Record<string, fc.Arbitrary<unknown>> = {
  id: text,
  n: fc.oneof(fc.constant(null), fc.maxSafeInteger()),
  small: fc.oneof(fc.constant(null), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  amount: fc.oneof(fc.constant(null), fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String)),
  at: fc.oneof(
    fc.constant(null),
    fc.integer({ min: 0, max: 4_102_444_800 }).map((s) => new Date(s * 1000).toISOString().replace('.000Z', 'Z')),
  ),
  day: fc.oneof(
    fc.constant(null),
    fc.integer({ min: 0, max: 50_000 }).map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10)),
  ),
  flag: fc.oneof(fc.constant(null), fc.boolean()),
  doc: fc.oneof(fc.constant(null), text),
};

/** A valid row in one of the shapes rows come in: exact, a key missing or undefined, reordered, an extra key. */
const row: fc.Arbitrary<Row> = fc
  .tuple(
    fc.record(values) as fc.Arbitrary<Row>,
    fc.constantFrom('exact', 'missing', 'undefined', 'reordered', 'extra'),
    fc.nat(COLUMNS.length - 2),
  )
  .map(([r, shape, k]) => {
    const name = COLUMNS[k + 1]!.name; // never the non-nullable id
    if (shape === 'missing') delete r[name];
    if (shape === 'undefined') (r as Record<string, unknown>)[name] = undefined;
    if (shape === 'reordered') {
      const v = r[name]!;
      delete r[name];
      r[name] = v;
    }
    if (shape === 'extra') (r as Record<string, unknown>).extra = 'not a column';
    return r;
  });

describe('NDJSON page encoder', () => {
  it('writes every row shape exactly like the column-by-column reference', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 30 }), (rows) => {
        expect(createNdjsonEncoder(COLUMNS)(rows, 0)).toBe(reference(rows));
      }),
      { numRuns: 400 },
    );
  });

  it('rejects a value that does not fit in any row shape, naming the column and the row', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 10 }),
        fc.nat(),
        fc.constantFrom<[string, unknown]>(
          ['n', 1.5],
          ['small', 2 ** 31],
          ['amount', '007'],
          ['at', '2024-02-30T00:00:00Z'],
          ['day', '2024-13-01'],
          ['flag', 1],
          ['doc', 5],
          ['id', null],
        ),
        (rows, at, [name, bad]) => {
          const i = at % rows.length;
          (rows[i] as Record<string, unknown>)[name] = bad;
          let err: unknown;
          try {
            createNdjsonEncoder(COLUMNS)(rows, 100);
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(InvalidRowValueError);
          expect((err as InvalidRowValueError).column).toBe(name);
          expect((err as InvalidRowValueError).details).toContain(`row ${i} of the page (row ${100 + i} of the file)`);
        },
      ),
      { numRuns: 200 },
    );
  });
});
