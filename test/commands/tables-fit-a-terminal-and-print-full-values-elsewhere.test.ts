import { describe, expect, it } from 'vitest';
import { renderFields, renderTable, type TableColumn } from '../../src/commands/table.js';

interface R {
  name: string;
  hash: string;
  n: number | null;
}
const rows: R[] = [
  { name: 'alice', hash: `0x${'ab'.repeat(32)}`, n: 7 },
  { name: 'bob', hash: `0x${'cd'.repeat(32)}`, n: null },
];
const columns: TableColumn<R>[] = [
  { header: 'name', value: (r) => r.name },
  { header: 'hash', value: (r) => r.hash },
  { header: 'n', value: (r) => r.n, align: 'right' },
];

describe('text tables', () => {
  it('off a TTY every value is printed in full, columns aligned, nulls as "-"', () => {
    const lines = renderTable(rows, columns).trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe(`alice  ${rows[0]!.hash}  7`);
    expect(lines[2]).toBe(`bob    ${rows[1]!.hash}  -`);
    expect(lines[0]!.indexOf('hash')).toBe(lines[1]!.indexOf('0x'));
  });

  it('on a TTY the widest column is shortened with … until each line fits the width', () => {
    const lines = renderTable(rows, columns, { maxWidth: 40 }).trimEnd().split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(40);
    expect(lines[1]).toMatch(/^alice {2}0xabab[ab]*… {2}7$/);
    expect(lines[1]!.startsWith('alice  0xab')).toBe(true);
  });

  it('an empty table says so; fields are aligned label: value lines', () => {
    expect(renderTable([], columns, { empty: '(no NFTs)' })).toBe('(no NFTs)\n');
    expect(
      renderFields([
        ['type', 'block'],
        ['address', null],
      ]),
    ).toBe('type:    block\naddress: -\n');
  });
});
