/**
 * Issue 45 item 2: a table 100% undecoded was reported as a success with `warnings: []`. An event
 * signature in its canonical form (`Transfer(address,address,uint256)`, no `indexed`) against the
 * sandbox: every row is written with decode_status no_abi and null arg_* columns. The run still
 * exits 0 (the rows are the logs, written exactly), but says so everywhere a scheduler looks: the
 * report counts the table's rows by decode status (`decode_status`) and warns, naming the indexed
 * topics the signature lacks and how to write it; the summary has a NOT DECODED line; a warn log
 * line; the metrics count the rows not decoded per table. The same job with `indexed` marked has
 * every row decoded and no warning.
 */
import { join } from 'node:path';
import { writeFileSync, mkdirSync } from 'node:fs';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { renderMetrics } from '../../src/run/metrics.js';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 45, transactions: 2_000 });
const tmp = useTempDir('undecoded-');

async function run(name: string, signature: string): Promise<{ code: number; report: RunReport; stdout: string; logs: string }> {
  const token = sandbox.data.contracts.find((c) => c.symbol === 'SUSD' && c.chainId === 1)!;
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'job.yaml');
  writeFileSync(
    file,
    stringify({
      name,
      source: { base_url: 'sandbox', chains: [1] },
      targets: [{ contract: token.address, events: [signature] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    }),
  );
  const flags = ['--destination', join(dir, 'out'), '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl];
  const json = await runCli(['run', file, ...flags, '--json', '--log-level', 'warn'], { logs: true });
  const report = JSON.parse(json.stdout) as RunReport;
  return { code: json.code, report, stdout: json.stdout, logs: json.stderr };
}

describe('rows that fail to decode', () => {
  it('are counted per table and reason in the report, warned of with the signature to write, logged and in the metrics', async () => {
    const { code, report, logs } = await run('canonical', 'Transfer(address,address,uint256)');
    expect(code, logs).toBe(ExitCode.ok);
    expect(report.rows).toBeGreaterThan(0);
    const tables = Object.entries(report.decode_status ?? {});
    expect(tables).toHaveLength(1);
    const [table, statuses] = tables[0]!;
    // Every row written is counted, by its status: here all no_abi.
    expect(statuses).toEqual({ no_abi: report.rows });
    expect(report.warnings).toHaveLength(1);
    const w = report.warnings[0]!.warning;
    expect(w).toContain(`table ${table}: ${report.rows} of ${report.rows} rows not decoded (no_abi ${report.rows})`);
    expect(w).toContain('the logs carry 2 indexed topics after topic0, the signature marks 0 parameter(s) indexed');
    expect(w).toContain('"Transfer(address indexed, address indexed, uint256)"');
    expect(report.warnings[0]!.unit).toMatch(/^events\//);

    const warnLine = logs.split('\n').find((l) => l.includes('"rows not decoded"'));
    expect(warnLine, logs).toBeDefined();
    expect(JSON.parse(warnLine!)).toMatchObject({ level: 40, table, rows: report.rows, rows_not_decoded: report.rows });

    const metrics = renderMetrics(report);
    expect(metrics).toContain(`insight_export_run_rows_not_decoded{table="${table}"} ${report.rows}`);
    expect(metrics).toContain(`insight_export_run_rows_decode_status{table="${table}",status="no_abi"} ${report.rows}`);
  });

  it('are reported in the summary line, and a signature with indexed marked decodes every row with no warning', async () => {
    const token = sandbox.data.contracts.find((c) => c.symbol === 'SUSD' && c.chainId === 1)!;
    const dir = join(tmp.dir, 'summary');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'job.yaml');
    const job = (signature: string) =>
      stringify({
        name: 'summary',
        source: { base_url: 'sandbox', chains: [1] },
        targets: [{ contract: token.address, events: [signature] }],
        range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
      });
    writeFileSync(file, job('Transfer(address,address,uint256)'));
    const flags = ['--destination', join(dir, 'out'), '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl];
    const plain = await runCli(['run', file, ...flags, '--log-level', 'silent']);
    expect(plain.code, plain.stderr).toBe(ExitCode.ok);
    expect(plain.stdout).toMatch(/decode: table \S+: (\d+) of \1 rows NOT DECODED \(no_abi \1\)/);
    expect(plain.stdout).toContain('WARNING events/');

    const marked = await run('marked', 'Transfer(address indexed, address indexed, uint256)');
    expect(marked.code).toBe(ExitCode.ok);
    expect(marked.report.rows).toBeGreaterThan(0);
    expect(Object.values(marked.report.decode_status ?? {})).toEqual([{ ok: marked.report.rows }]);
    expect(marked.report.warnings).toEqual([]);
  });
});
