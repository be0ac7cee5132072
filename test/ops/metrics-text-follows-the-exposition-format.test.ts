/**
 * renderMetrics output is Prometheus text format 0.0.4: HELP/TYPE once per family before its
 * samples, label values escaped, no timestamps; the success time only in succeeded runs; the
 * Pushgateway group path carries the shard; credentials in the URL become basic auth.
 */
import { describe, expect, it } from 'vitest';
import { parsePushgatewayUrl, pushGroupPath, renderMetrics } from '../../src/run/metrics.js';
import type { RunReport } from '../../src/run/report.js';

function report(over: Partial<RunReport> = {}): RunReport {
  const figures = (rows: number) => ({
    windows: { planned: 2, done: 2, failed: 0, abandoned: 0 },
    rows,
    files: 2,
    bytes: rows * 10,
    rows_rejected: {},
  });
  return {
    job: 'j',
    run_id: 'r',
    status: 'succeeded',
    started_at: '2024-02-01T00:00:00.000Z',
    finished_at: '2024-02-01T00:01:00.000Z',
    duration_s: 60,
    destination: '/x',
    windows: { planned: 4, done: 4, failed: 0, abandoned: 0 },
    units_skipped: 0,
    units_total: 2,
    rows: 30,
    files: 4,
    bytes: 300,
    requests: 9,
    retries: 1,
    store_retries: 2,
    responses_429: 0,
    rows_rejected: { other_chain: 0, outside_slice: 1, other_wallet: 2, other_contract: 0, other_event: 0 },
    failed: [],
    warnings: [],
    shard: null,
    range_clamped: [],
    by_dataset: { 'we"ird\\name\nx': figures(10), events: figures(20) },
    by_chain: { '1': { ...figures(30), requests: 9, retries: 1 } },
    ...over,
  };
}

const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*\})? (-?[0-9.e+]+|NaN|[+-]Inf)$/;

describe('renderMetrics', () => {
  it('every line is a HELP, a TYPE or a sample; each family is declared once, before its samples', () => {
    const text = renderMetrics(report());
    expect(text.endsWith('\n')).toBe(true);
    const declared = new Set<string>();
    for (const line of text.trimEnd().split('\n')) {
      const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (meta) {
        if (meta[1] === 'TYPE') {
          expect(meta[3]).toBe('gauge');
          expect(declared.has(meta[2]!)).toBe(false);
          declared.add(meta[2]!);
        }
        continue;
      }
      const m = SAMPLE.exec(line);
      expect(m, line).not.toBeNull();
      expect(declared.has(m![1]!), `${m![1]} sampled before its TYPE`).toBe(true);
    }
    expect(text).toContain('insight_export_dataset_rows{dataset="we\\"ird\\\\name\\nx"} 10');
    expect(text).toContain('insight_export_chain_rows{chain_id="1"} 30');
    expect(text).toContain('insight_export_run_rows_rejected{reason="other_wallet"} 2');
    expect(text).toContain('insight_export_run_rows_rejected{reason="other_event"} 0');
    expect(text).toContain('insight_export_last_success_timestamp_seconds 1706745660');
  });

  it('a failed run has no success time and says failed', () => {
    const text = renderMetrics(report({ status: 'failed' }));
    expect(text).not.toContain('insight_export_last_success_timestamp_seconds');
    expect(text).toContain('insight_export_run_status{status="failed"} 1');
    expect(text).toContain('insight_export_run_status{status="succeeded"} 0');
  });
});

describe('Pushgateway target', () => {
  it('groups by job and shard', () => {
    expect(pushGroupPath({ job: 'usdc', shard: null })).toBe('/metrics/job/usdc');
    expect(pushGroupPath({ job: 'usdc', shard: '3/8' })).toBe('/metrics/job/usdc/shard/3-of-8');
  });

  it('moves URL credentials into basic auth and out of what is displayed', () => {
    const t = parsePushgatewayUrl('https://ops:p%40ss@gw.example.com:9091/prefix/', '--pushgateway');
    expect(t.url).toBe('https://gw.example.com:9091/prefix');
    expect(t.display).not.toContain('p@ss');
    expect(t.authorization).toBe(`Basic ${Buffer.from('ops:p@ss').toString('base64')}`);
    expect(() => parsePushgatewayUrl('not a url', 'env')).toThrow(/not a URL/);
  });
});
