/**
 * Issue 45 item 6 (first part): two targets naming one table for rows with different columns
 * passed `validate` and failed `run`. `validate` now refuses it, naming the fields, before any request.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('validate-tables-');

const target = (contract: string, sig: string) => [
  `  - contract: "${contract}"`,
  '    events:',
  `      - signature: "${sig}"`,
  '        tables: {events: shared}',
];

describe('validate', () => {
  it('refuses one table name for rows with other columns, naming both fields with their file and line', async () => {
    const file = join(tmp.dir, 'job.yaml');
    const head = ['name: tables', 'source:', '  base_url: sandbox', '  chains: [1]', 'targets:'];
    const targets = [
      ...target('0x77f5e148a71be22cf4f3a1816626b240547b6302', 'Transfer(address indexed from, address indexed to, uint256 value)'),
      ...target('0xc5e73d5393def808b9548a60ed376b524d6e311d', 'Approval(address indexed owner, address indexed spender, uint256 value)'),
    ];
    const tail = ['range:', '  from: "2024-02-01"', '  to: "2024-02-02"', 'output:', `  destination: ${join(tmp.dir, 'out')}`, ''];
    writeFileSync(file, [...head, ...targets, ...tail].join('\n'));
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Table "shared" is named for rows with other columns');
    // Each field with its file and line, as the loader's own problems are named.
    expect(r.stderr).toMatch(
      /job\.yaml:13:\d+ targets\[1\]\.events\[0\]\.tables\.events against \S*job\.yaml:9:\d+ targets\[0\]\.events\[0\]\.tables\.events/,
    );
  });
});
