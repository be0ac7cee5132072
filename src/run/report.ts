import type { Job } from '../job/schema.js';
import type { Plan } from '../plan/index.js';
import type { InsightClient } from '../source/client.js';
import type { UnitOutcome } from './export-units.js';

/** The run report, written as JSON beside the state (`_state/<job>/reports/<run>.json`). */
export interface RunReport {
  job: string;
  run_id: string;
  status: 'succeeded' | 'failed' | 'interrupted';
  started_at: string;
  finished_at: string;
  duration_s: number;
  destination: string;
  windows: { planned: number; done: number; failed: number; abandoned: number };
  /** Unit streams (dataset x target x chain) whose whole range was already exported. */
  units_skipped: number;
  units_total: number;
  rows: number;
  files: number;
  bytes: number;
  requests: number;
  retries: number;
  responses_429: number;
  failed: { unit: string; window: [number, number]; error: string }[];
  report_key?: string;
}

export interface ReportInput {
  job: Job;
  runId: string;
  started: number;
  plan: Plan;
  outcomes: UnitOutcome[];
  destination: string;
  client: InsightClient;
  interrupted: boolean;
}

export function buildReport(r: ReportInput): RunReport {
  const count = (s: UnitOutcome['status']) => r.outcomes.filter((o) => o.status === s).length;
  const failed = r.outcomes.filter((o) => o.status === 'failed');
  const abandoned = count('abandoned');
  const finished = Date.now();
  const stats = r.client.stats;
  return {
    job: r.job.name,
    run_id: r.runId,
    status: r.interrupted || abandoned > 0 ? 'interrupted' : failed.length > 0 ? 'failed' : 'succeeded',
    started_at: new Date(r.started).toISOString(),
    finished_at: new Date(finished).toISOString(),
    duration_s: Math.round((finished - r.started) / 10) / 100,
    destination: r.destination,
    windows: { planned: r.plan.units.length, done: count('done'), failed: failed.length, abandoned },
    units_skipped: r.plan.coverage.filter((c) => c.todo.length === 0 && c.done.length > 0).length,
    units_total: r.plan.coverage.length,
    rows: sum(r.outcomes, 'rows'),
    files: sum(r.outcomes, 'files'),
    bytes: sum(r.outcomes, 'bytes'),
    requests: stats.requests,
    retries: stats.retries,
    responses_429: stats.status429,
    failed: failed.map((o) => ({ unit: o.unitKey, window: [o.start, o.end], error: o.error ?? 'unknown' })),
  };
}

function sum(outcomes: UnitOutcome[], field: 'rows' | 'files' | 'bytes'): number {
  return outcomes.reduce((n, o) => n + o[field], 0);
}
