import type { InsightClient } from '../source/client.js';
import type { ListQuery } from '../source/query.js';
import type { AggregationRow } from '../source/records.js';
import type { StreamTarget } from './target-kinds.js';

/**
 * How `verify --recount`, `run --repair` and settling ask the service how many rows a window of a
 * paged dataset holds (src/run/recount.ts). `Target` is what a count needs of the unit's target.
 */
export interface Recount<Target> {
  /**
   * The target as a count needs it, from the unit's target (its address, its event): built without
   * decoders, since a count decodes nothing, so a run that only recounts loads none (viem).
   */
  target(unit: StreamTarget): Target;
  /** The aggregate answer of the dataset's route to `q` (a count, grouped by chain_id or not). */
  aggregate(client: InsightClient, target: Target, q: ListQuery): Promise<AggregationRow[]>;
  /**
   * Where a server of the route counts some rows twice (the open-source indexer runs the wallet
   * route as a UNION ALL of a from- and a to-query, so an ungrouped count answers one row per half
   * and a self-transfer is in both): the columns that tell such an exported row, and the test.
   * Without it, a count in halves cannot be compared with the files.
   */
  countedTwice?: { columns: readonly string[]; test(row: Record<string, unknown>, target: Target): boolean };
}
