import type { ForeignCounts, ForeignKind } from './foreign-rows.js';
import type { InconsistencyKind } from './inconsistencies.js';

export interface SandboxStats {
  requests: number;
  byStatus: Record<number, number>;
  byRoute: Record<string, number>;
  faultsInjected: Record<string, number>;
  /**
   * Rows of another wallet, contract, event or chain put into list answers (`foreignRows`), by kind;
   * counted when the answer is made, before an inconsistency (an empty answer, a stale cache's, a
   * cut page) may replace it.
   */
  foreignRowsSent: Partial<Record<ForeignKind, number>>;
  /** Answers an inconsistency changed (src/sandbox/inconsistencies.ts), by kind. */
  inconsistencies: Partial<Record<InconsistencyKind, number>>;
}

/** What the server answered, for tests and benchmarks (SandboxServer.stats). */
export class RequestStats {
  private current: SandboxStats = RequestStats.empty();

  private static empty(): SandboxStats {
    return { requests: 0, byStatus: {}, byRoute: {}, faultsInjected: {}, foreignRowsSent: {}, inconsistencies: {} };
  }

  request(): void {
    this.current.requests++;
  }

  route(name: string): void {
    this.current.byRoute[name] = (this.current.byRoute[name] ?? 0) + 1;
  }

  status(status: number): void {
    this.current.byStatus[status] = (this.current.byStatus[status] ?? 0) + 1;
  }

  fault(kind: string): void {
    this.current.faultsInjected[kind] = (this.current.faultsInjected[kind] ?? 0) + 1;
  }

  foreignRows(counts: ForeignCounts): void {
    const sent = this.current.foreignRowsSent;
    for (const [kind, n] of Object.entries(counts) as [ForeignKind, number][]) sent[kind] = (sent[kind] ?? 0) + n;
  }

  inconsistency(kind: InconsistencyKind): void {
    const seen = this.current.inconsistencies;
    seen[kind] = (seen[kind] ?? 0) + 1;
  }

  snapshot(): SandboxStats {
    return structuredClone(this.current);
  }

  reset(): void {
    this.current = RequestStats.empty();
  }
}
