/**
 * Trial (not adopted): the NDJSON page encoder's per-value checks as generated code (new Function,
 * one direct property read per column) against today's loop over column names, and against
 * JSON.stringify alone, on 60,000 sandbox transaction rows; CPU µs per row of each, 4 rounds:
 *
 *   npx tsx bench/ndjson-encoder-checks.ts
 *
 * The generated checks are a simplified copy (no error messages, no timestamp parsing) that writes
 * the same text on these rows: a bound on what the change could save, not a replacement.
 */
import { createNdjsonEncoder } from '../src/sink/row-values.js';
import { sandboxTransactionRows } from './sandbox-transaction-rows.js';
import type { Column, Row } from '../src/columns/columns.js';

const { rows, columns } = await sandboxTransactionRows(20);
const UINT256_RE = /^(?:0|[1-9][0-9]{0,77})$/;
const MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
function gen(cols: readonly Column[]) {
  const body: string[] = [];
  const ks = cols.map((c) => JSON.stringify(c.name));
  body.push(`const own = Object.keys(row); if (own.length !== ${cols.length}) return false;`);
  cols.forEach((c, i) => {
    body.push(`if (own[${i}] !== ${ks[i]}) return false;`);
    const v = `row[${ks[i]}]`;
    const chk: Record<string, string> = {
      int32: `typeof v === 'number' && (v | 0) === v`,
      int64: `Number.isSafeInteger(v)`,
      uint256: `typeof v === 'string' && RE.test(v) && (v.length < 78 || v <= MAX)`,
      string: `typeof v === 'string' && v.isWellFormed()`,
      json: `typeof v === 'string' && v.isWellFormed()`,
      bool: `typeof v === 'boolean'`,
      timestamp: `typeof v === 'string'`,
      date: `typeof v === 'string'`,
    };
    body.push(`{ const v = ${v}; if (v === null) { ${c.nullable ? '' : 'return false;'} } else if (!(${chk[c.type]})) return false; }`);
  });
  body.push('return true;');
  // The trial measures generated code: building it from text is the point.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const f = new Function('RE', 'MAX', `return function (row) { ${body.join('\n')} }`)(UINT256_RE, MAX) as (r: Row) => boolean;
  return (rs: readonly Row[]) => {
    const lines = new Array<string>(rs.length + 1);
    for (let r = 0; r < rs.length; r++) lines[r] = f(rs[r]!) ? JSON.stringify(rs[r]) : 'x';
    lines[rs.length] = '';
    return lines.join('\n');
  };
}
const cur = createNdjsonEncoder(columns);
const g = gen(columns);
const stringifyOnly = (rs: readonly Row[]) => rs.map((r) => JSON.stringify(r)).join('\n') + '\n';
const pages = (enc: (rs: Row[], i: number) => string) => {
  let n = 0;
  for (let i = 0; i < rows.length; i += 1000) n += enc(rows.slice(i, i + 1000), i).length;
  return n;
};
for (let rep = 0; rep < 4; rep++) {
  for (const [name, enc] of [
    ['current', cur],
    ['generated checks', g],
    ['JSON.stringify only', stringifyOnly],
  ] as const) {
    const c0 = process.cpuUsage();
    let best = Infinity;
    for (let k = 0; k < 3; k++) {
      const t = performance.now();
      pages(enc as never);
      best = Math.min(best, performance.now() - t);
    }
    const c = process.cpuUsage(c0);
    console.log(
      rep,
      name.padEnd(22),
      ((best * 1000) / rows.length).toFixed(2),
      'µs/row best wall;',
      ((c.user + c.system) / 3 / rows.length).toFixed(2),
      'µs/row cpu',
    );
  }
}
console.log(cur(rows.slice(0, 1000), 0) === g(rows.slice(0, 1000)));
