/**
 * Issue 14.9: `decode --file` refused the tool's own exported rows, though the README said whole
 * exported records work. It now takes the files a run writes as they are: NDJSON (.ndjson.gz)
 * and Parquet event rows (topic0..topic3, data), and transaction rows (data).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('decode-exported-');
const TOKEN = '0x77f5e148a71be22cf4f3a1816626b240547b6302';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

async function exportAs(format: 'ndjson' | 'parquet'): Promise<string> {
  const dest = join(tmp.dir, format);
  const job = join(tmp.dir, `${format}.yaml`);
  writeFileSync(
    job,
    [
      `name: decode-${format}`,
      'source:',
      '  base_url: sandbox',
      '  chains: [1]',
      'targets:',
      `  - contract: "${TOKEN}"`,
      '    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]',
      'range:',
      '  from: "2024-02-01"',
      '  to: "2024-02-02"',
      '  chunk: 1d',
      'output:',
      `  destination: ${dest}`,
      `  format: ${format}`,
      '',
    ].join('\n'),
  );
  const res = await runCli(['run', job, '--log-level', 'silent']);
  expect(res.code).toBe(0);
  // The data file: not the table's column record under _state/.
  const files = filesUnder(join(dest)).filter((f) => f.includes('/events_') && !f.includes('/_state/'));
  expect(files).toHaveLength(1);
  return files[0]!;
}

it('decodes an exported NDJSON.gz and Parquet file of events: every row, to the arguments the export decoded', async () => {
  const ndjson = await exportAs('ndjson');
  const rows = gunzipSync(readFileSync(ndjson))
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { arg_from: string; arg_to: string; arg_value: string });
  expect(rows.length).toBeGreaterThan(3);
  const expected = rows.map((r) => ['Transfer', [r.arg_from, r.arg_to, r.arg_value]]);

  for (const file of [ndjson, await exportAs('parquet')]) {
    const res = await runCli(['decode', TOKEN, '--chain', '1', '--file', file, '--json', '--base-url', 'sandbox', '--log-level', 'silent']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { logs: { event_name: string; args: unknown[] }[]; transactions: unknown[] };
    expect(out.logs.map((l) => [l.event_name, l.args.map((a) => String(a).toLowerCase())])).toEqual(expected);
    expect(out.transactions).toEqual([]);
  }
}, 120_000);
