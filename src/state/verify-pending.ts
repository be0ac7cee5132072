/** What verify says is pending: the chains whose fixed range the service does not serve to its end yet. */
import type { Job } from '../job/schema.js';
import { headServingAll, parseStreamKey, type Plan } from '../plan/index.js';
import type { PendingTail, StreamSummary } from './verify-report.js';

export function pendingOf(plan: Plan, units: readonly StreamSummary[], job: Job): PendingTail[] {
  const range = job.range;
  if (!range) return [];
  const out: PendingTail[] = [];
  for (const c of plan.clamped) {
    const windows = units.filter((u) => parseStreamKey(u.unit)?.chainId === c.chainId).reduce((n, u) => n + u.windows_pending, 0);
    if (windows === 0) continue;
    const head = plan.heads[c.chainId];
    out.push({
      chain_id: c.chainId,
      axis: range.by,
      windows,
      range: [Math.max(range.from, c.end), c.to],
      head: (range.by === 'block' ? head?.block : head?.time) ?? null,
      exportable_at_head: headServingAll(range, c.to),
    });
  }
  return out;
}
