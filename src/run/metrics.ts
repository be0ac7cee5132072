/**
 * Run metrics in the Prometheus text exposition format (version 0.0.4), and their push to a
 * Prometheus Pushgateway: a batch job ends before anything could scrape it, so it pushes.
 *
 * Every metric is a gauge describing the last run of a job (or of one shard of it). The push is a
 * POST to `/metrics/job/<job>[/shard/<i>-of-<N>]`, which replaces the metrics of the same names in
 * that group only: `insight_export_last_success_timestamp_seconds`, sent by succeeded runs alone,
 * therefore survives failed runs, which is what a "no success for N hours" alert needs.
 */
import { undecodedRows } from './decode-tally.js';
import { icebergFamilies } from './iceberg-metrics.js';
import { InsightExportError, UserInputError, errorMessage } from '../errors.js';
import type { RunFigures, RunReport } from './report.js';

export class MetricsPushError extends InsightExportError {
  override name = 'MetricsPushError';
}

export class PushgatewayUrlError extends UserInputError {
  override name = 'PushgatewayUrlError';
}

type Labels = Record<string, string>;

interface Family {
  name: string;
  help: string;
  samples: { labels: Labels; value: number }[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function render(families: Family[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (f.samples.length === 0) continue;
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} gauge`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(',');
      out.push(`${f.name}${labels ? `{${labels}}` : ''} ${formatValue(s.value)}`);
    }
  }
  return `${out.join('\n')}\n`;
}

const STATUSES: RunReport['status'][] = ['succeeded', 'failed', 'interrupted'];
const WINDOW_STATES = ['planned', 'done', 'failed', 'abandoned'] as const;

function breakdown(prefix: string, label: string, what: string, groups: Record<string, RunFigures>): Family[] {
  const entries = Object.entries(groups);
  const one = (field: 'rows' | 'files' | 'bytes', help: string): Family => ({
    name: `insight_export_${prefix}_${field}`,
    help: `${help} exported by the last run, by ${what}`,
    samples: entries.map(([k, g]) => ({ labels: { [label]: k }, value: g[field] })),
  });
  return [
    {
      name: `insight_export_${prefix}_windows`,
      help: `Windows of the last run by ${what} and state (planned, done, failed, abandoned)`,
      samples: entries.flatMap(([k, g]) => WINDOW_STATES.map((s) => ({ labels: { [label]: k, state: s }, value: g.windows[s] }))),
    },
    one('rows', 'Rows'),
    one('files', 'Files'),
    one('bytes', 'Bytes of files'),
  ];
}

/** Reorganisations the last run found and repaired, by chain (every chain of the run, 0 when none). */
function reorgFamilies(report: RunReport): Family[] {
  const chains = Object.keys(report.by_chain);
  for (const r of report.reorgs ?? []) if (!chains.includes(String(r.chain_id))) chains.push(String(r.chain_id));
  const of = (chain: string) => (report.reorgs ?? []).filter((r) => String(r.chain_id) === chain);
  return [
    {
      name: 'insight_export_reorgs_detected',
      help: 'Units whose completed windows the last run found reorganised, by chain',
      samples: chains.map((c) => ({ labels: { chain_id: c }, value: of(c).length })),
    },
    {
      name: 'insight_export_windows_reexported',
      help: 'Completed windows the last run exported again because of a reorganisation, by chain',
      samples: chains.map((c) => ({ labels: { chain_id: c }, value: of(c).reduce((n, r) => n + r.windows.length, 0) })),
    },
    {
      name: 'insight_export_reorg_depth_blocks',
      help: 'Blocks of exported rows replaced by the deepest reorganisation the last run found (from the lowest replaced block to the newest exported one), by chain',
      samples: chains.map((c) => ({ labels: { chain_id: c }, value: Math.max(0, ...of(c).map((r) => r.depth)) })),
    },
  ];
}

const SETTLE_STATES = ['recounted', 'waiting', 'settled', 'reexported', 'pending', 'not_provable'] as const;

/** Windows of earlier runs the last run recounted and what became of them (src/run/settle.ts); none with --force. */
function settleFamilies(report: RunReport): Family[] {
  const s = report.settle;
  if (!s) return [];
  return [
    {
      name: 'insight_export_settle_windows',
      help: 'Windows of earlier runs not settled, by what the last run did: recounted, waiting (recounted before, within the horizon); and what they became: settled, reexported (count differed), pending (equal within the horizon), not_provable. recounted + waiting = settled + reexported + pending + not_provable',
      samples: SETTLE_STATES.map((state) => ({ labels: { state }, value: s[state] })),
    },
    {
      name: 'insight_export_settle_requests',
      help: 'Requests the last run sent to recount windows of earlier runs (counts, and block lookups of block windows)',
      samples: [{ labels: {}, value: s.requests }],
    },
    {
      name: 'insight_export_settle_failed',
      help: 'Whether the recount of the last run failed (1; its windows are recounted by the next run) or not (0)',
      samples: [{ labels: {}, value: s.error === undefined ? 0 : 1 }],
    },
  ];
}

/** What the service sent that the run did not take: rows not written, answers asked again. */
function answerFamilies(report: RunReport): Family[] {
  return [
    {
      name: 'insight_export_run_rows_rejected',
      help: 'Rows the service sent that the last run did not write, by reason (other_chain, outside_slice, other_wallet, other_contract, other_event)',
      samples: Object.entries(report.rows_rejected).map(([reason, n]) => ({ labels: { reason }, value: n })),
    },
    {
      name: 'insight_export_run_bad_answers',
      help: 'Answers of the service the last run did not take as a proof and asked again, by reason (outside_slice, implausible, block_hash, fewer_than_known, unexpectedly_empty, cut_page, edge_not_served)',
      samples: Object.entries(report.bad_answers ?? {}).map(([reason, n]) => ({ labels: { reason }, value: n })),
    },
    {
      name: 'insight_export_run_rows_decode_status',
      help: "Rows the last run wrote to each table of a dataset that decodes, by decode status (ok, no_calldata, no_abi, 'error: <reason>'); all but ok and no_calldata failed to decode",
      samples: Object.entries(report.decode_status ?? {}).flatMap(([table, statuses]) =>
        Object.entries(statuses).map(([status, n]) => ({ labels: { table, status }, value: n })),
      ),
    },
    {
      name: 'insight_export_run_rows_not_decoded',
      help: 'Rows the last run wrote that failed to decode (decode_status no_abi or error), by table',
      samples: Object.entries(report.decode_status ?? {}).map(([table, statuses]) => ({
        labels: { table },
        value: undecodedRows({ table, statuses }),
      })),
    },
  ];
}

/** The run's metrics as Prometheus text (no timestamps: the Pushgateway refuses them). */
export function renderMetrics(report: RunReport): string {
  const seconds = (iso: string) => Date.parse(iso) / 1000;
  const families: Family[] = [
    {
      name: 'insight_export_run_status',
      help: 'Outcome of the last run: 1 for its status, 0 for the others',
      samples: STATUSES.map((s) => ({ labels: { status: s }, value: report.status === s ? 1 : 0 })),
    },
    {
      name: 'insight_export_run_start_timestamp_seconds',
      help: 'Start of the last run, unix seconds',
      samples: [{ labels: {}, value: seconds(report.started_at) }],
    },
    {
      name: 'insight_export_run_finish_timestamp_seconds',
      help: 'End of the last run, unix seconds',
      samples: [{ labels: {}, value: seconds(report.finished_at) }],
    },
    { name: 'insight_export_run_duration_seconds', help: 'Duration of the last run', samples: [{ labels: {}, value: report.duration_s }] },
    {
      name: 'insight_export_last_success_timestamp_seconds',
      help: 'End of the last run that succeeded, unix seconds (pushed by succeeded runs only)',
      samples: report.status === 'succeeded' ? [{ labels: {}, value: seconds(report.finished_at) }] : [],
    },
    {
      name: 'insight_export_run_windows',
      help: 'Windows of the last run by state (planned, done, failed, abandoned)',
      samples: WINDOW_STATES.map((s) => ({ labels: { state: s }, value: report.windows[s] })),
    },
    {
      name: 'insight_export_run_units',
      help: 'Unit streams (dataset x target x chain) of the job or shard: all of them, and those already complete before the run',
      samples: [
        { labels: { state: 'total' }, value: report.units_total },
        { labels: { state: 'complete' }, value: report.units_skipped },
      ],
    },
    { name: 'insight_export_run_rows', help: 'Rows exported by the last run', samples: [{ labels: {}, value: report.rows }] },
    { name: 'insight_export_run_files', help: 'Files written by the last run', samples: [{ labels: {}, value: report.files }] },
    {
      name: 'insight_export_run_bytes',
      help: 'Bytes of the files written by the last run',
      samples: [{ labels: {}, value: report.bytes }],
    },
    {
      name: 'insight_export_run_requests',
      help: 'Requests sent to the read interface by the last run, retries included',
      samples: [{ labels: {}, value: report.requests }],
    },
    { name: 'insight_export_run_retries', help: 'Retried requests of the last run', samples: [{ labels: {}, value: report.retries }] },
    {
      name: 'insight_export_run_responses_429',
      help: 'HTTP 429 responses the last run received',
      samples: [{ labels: {}, value: report.responses_429 }],
    },
    {
      name: 'insight_export_service_head_behind_seconds',
      help: "Seconds from the time of the newest block the service served in the last run to the run's clock, by chain (how far its index lags)",
      samples: (report.service_heads ?? []).map((h) => ({ labels: { chain_id: String(h.chain_id) }, value: h.behind_clock_s })),
    },
    {
      name: 'insight_export_range_clamped_lag',
      help: "How far the last run's exportable end lagged the job's fixed range.to (blocks or seconds, the range's unit), by chain; 0 when not clamped",
      samples: Object.keys(report.by_chain).map((c) => ({
        labels: { chain_id: c },
        value: report.range_clamped.find((x) => String(x.chain_id) === c)?.lag ?? 0,
      })),
    },
    ...answerFamilies(report),
    ...reorgFamilies(report),
    ...icebergFamilies(report),
    ...settleFamilies(report),
    ...breakdown('dataset', 'dataset', 'dataset', report.by_dataset),
    ...breakdown('chain', 'chain_id', 'chain', report.by_chain),
  ];
  return render(families);
}

export interface PushTarget {
  /** Base URL without credentials, e.g. http://pushgateway:9091 (path prefix kept). */
  url: string;
  /** From user:password in the URL, sent as HTTP basic auth; never logged. */
  authorization: string | null;
  /** The URL without credentials, for logs and errors. */
  display: string;
}

/** Validates a Pushgateway URL (http or https, optional user:password@); `where` names its origin. */
export function parsePushgatewayUrl(text: string, where: string): PushTarget {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    throw new PushgatewayUrlError('The Pushgateway URL is not a URL', { details: where, hint: 'e.g. http://pushgateway.monitoring:9091' });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new PushgatewayUrlError(`The Pushgateway URL must be http or https, not ${u.protocol}`, { details: where });
  }
  const authorization =
    u.username || u.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`
      : null;
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  const url = u.toString().replace(/\/+$/, '');
  return { url, authorization, display: url };
}

/** The Pushgateway group of a run: the job, and the shard when sharded (shards never overwrite each other). */
export function pushGroupPath(report: Pick<RunReport, 'job' | 'shard'>): string {
  let path = `/metrics/job/${encodeURIComponent(report.job)}`;
  if (report.shard) path += `/shard/${report.shard.replace('/', '-of-')}`;
  return path;
}

export interface PushOptions {
  timeoutMs?: number;
  attempts?: number;
  fetch?: typeof fetch;
}

/**
 * Pushes the run's metrics (POST: replaces the metrics of the same names in the run's group).
 * Retries network errors and 5xx a few times; fails with MetricsPushError.
 */
export async function pushMetrics(report: RunReport, target: PushTarget, opts: PushOptions = {}): Promise<void> {
  const doFetch = opts.fetch ?? fetch;
  const attempts = opts.attempts ?? 3;
  const url = `${target.url}${pushGroupPath(report)}`;
  const body = renderMetrics(report);
  const headers: Record<string, string> = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' };
  if (target.authorization) headers.authorization = target.authorization;
  let last = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const res = await doFetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
      const text = await res.text();
      if (res.ok) return;
      last = `HTTP ${res.status}: ${text.trim().slice(0, 300)}`;
      if (res.status < 500) break;
    } catch (err) {
      last = errorMessage(err);
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, 250 * attempt));
  }
  throw new MetricsPushError('The run metrics could not be pushed to the Pushgateway', {
    details: `POST ${target.display}${pushGroupPath(report)}: ${last}`,
    hint: 'The export itself is not affected; check the Pushgateway URL (--pushgateway / INSIGHT_EXPORT_PUSHGATEWAY_URL) and that it is reachable.',
  });
}
