/**
 * The two sources of the aggregates dataset, wallet transactions and contract events: the columns
 * their expressions may name, their names in tables and files, and their requests; the wallet's
 * refusing what the open-source indexer's from/to UNION ALL answers.
 */
import { parseEventSignature } from '../abi/event-signature.js';
import type { Column, ColumnType } from '../columns/columns.js';
import { EVENT_QUERY_FIELDS, TRANSACTION_QUERY_FIELDS } from '../columns/record-fields.js';
import { ExitCode, InsightExportError, walk } from '../errors.js';
import type { InsightClient } from '../source/client.js';
import { HttpStatusError } from '../source/errors.js';
import type { ListQuery } from '../source/query.js';
import type { AggregationRow } from '../source/records.js';
import type { AggregateSource, AggregateTarget } from './aggregate-query.js';
import { eventTableName } from './events.js';
import type { StreamTargetOf } from './target-kinds.js';

/**
 * The wallet route answered an aggregate the way the open-source indexer's UNION ALL of a from-
 * and a to-query does: it cannot be turned into the wallet's numbers exactly.
 */
export class AggregateWalletUnionError extends InsightExportError {
  override name = 'AggregateWalletUnionError';
  /** What the service cannot do: no later run changes it (exit 2). */
  override readonly exitCode: ExitCode = ExitCode.badInput;
}

/** The union error a target met: its other windows end with it at once, without asking again. */
const unionRefused = new WeakMap<AggregateTarget, AggregateWalletUnionError>();

/** Name -> type of the fields a source's expressions may name, in field order (the hint lists them). */
function fieldTypes(fields: readonly Column[]): Record<string, ColumnType> {
  return Object.fromEntries(fields.map((f) => [f.name, f.type]));
}

const TRANSACTION_TYPES = fieldTypes(TRANSACTION_QUERY_FIELDS);
const EVENT_TYPES = fieldTypes(EVENT_QUERY_FIELDS);

/**
 * A wallet's aggregation rows, refusing what the open-source indexer's from/to UNION ALL answers:
 * a 500 to a grouped aggregate, more than one row to an ungrouped one.
 */
async function walletAggregations(
  client: InsightClient,
  target: AggregateTarget,
  address: string,
  q: ListQuery,
  chainId: number,
  window: { start: number; end: number },
): Promise<AggregationRow[]> {
  const grouped = target.groupBy.length > 0;
  const refused = unionRefused.get(target);
  if (refused) throw new AggregateWalletUnionError(refused.shortMessage, { details: refused.details, hint: refused.hint });
  const where = `wallet ${address}, group_by ${(q.groupBy ?? []).join(', ') || '(none)'} (query ${target.queryKey})`;
  const wholeHint = 'export the transactions dataset and aggregate it in the warehouse';
  let rows: AggregationRow[];
  try {
    const known = grouped ? { likelyCause: 'the service cannot group aggregates of a wallet', sameMessageCounts: true } : undefined;
    rows = (await client.walletTransactions(address, q, undefined, known)).aggregations ?? [];
  } catch (err) {
    if (grouped && target.aggregates.length > 0 && walk(err, (e) => e instanceof HttpStatusError)?.status === 500) {
      // A property of the service, the same on every chain and window: the details name none of them.
      const error = new AggregateWalletUnionError(
        'The service cannot group aggregates of a wallet (HTTP 500 to every grouped wallet aggregate)',
        {
          details: where,
          hint: `The open-source indexer fails to GROUP BY around its from/to UNION of a wallet: ${wholeHint}, or aggregate a contract's events instead.`,
          cause: err,
        },
      );
      unionRefused.set(target, error);
      throw error;
    }
    throw err;
  }
  if (!grouped && rows.length > 1) {
    const error = new AggregateWalletUnionError(
      `The service answered ${rows.length} rows to an ungrouped wallet aggregate (one expected)`,
      {
        details: `${where}; first seen on chain ${chainId}, window [${window.start}, ${window.end})`,
        hint: `The open-source indexer aggregates the wallet's outgoing and incoming transactions separately (self-transfers in both), so no exact total can be made of them: ${wholeHint}.`,
      },
    );
    unionRefused.set(target, error);
    throw error;
  }
  return rows;
}

/** What aggregating one kind of source takes: the columns its expressions may name, its names, its request. */
export interface SourceRoute<S extends AggregateSource, K extends 'wallet' | 'contract'> {
  fields: Record<string, ColumnType>;
  sourceName: string;
  /** The source of a unit target, and the target as messages name it. */
  source(unit: StreamTargetOf<K>): S;
  label(unit: StreamTargetOf<K>): string;
  /** The source in the query identity, in the default table name, and in file names. */
  identity(s: S): string;
  table(s: S): string;
  key(s: S): string;
  fetch(
    client: InsightClient,
    target: AggregateTarget,
    s: S,
    q: ListQuery,
    chainId: number,
    window: { start: number; end: number },
  ): Promise<AggregationRow[]>;
}

type SourceRoutes = { [K in AggregateSource['kind']]: SourceRoute<Extract<AggregateSource, { kind: K }>, K> };

export const SOURCE_ROUTES: SourceRoutes = {
  wallet: {
    fields: TRANSACTION_TYPES,
    sourceName: 'Wallet transaction',
    source: (unit) => ({ kind: 'wallet', address: unit.wallet.toLowerCase() }),
    label: (unit) => `targets[${unit.targetIndex}] (wallet transactions)`,
    identity: (s) => s.address,
    table: () => 'aggregates_transactions',
    key: (s) => s.address,
    fetch: (client, target, s, q, chainId, window) => walletAggregations(client, target, s.address, q, chainId, window),
  },
  contract: {
    fields: EVENT_TYPES,
    sourceName: 'Event',
    source: (unit) => ({ kind: 'contract', address: unit.contract.toLowerCase(), signature: parseEventSignature(unit.event.signature) }),
    label: (unit) => `targets[${unit.targetIndex}] (events ${unit.event.signature})`,
    identity: (s) => `${s.address}:${s.signature.topic0}`,
    table: (s) => `aggregates_${eventTableName(s.signature)}`,
    key: (s) => `${s.address}_${s.signature.topic0.slice(2, 10)}`,
    fetch: async (client, _target, s, q) => (await client.contractEvents(s.address, s.signature.human, q)).aggregations ?? [],
  },
};

/** The route of a source's kind. */
export function routeOf<S extends AggregateSource>(s: S): SourceRoute<S, S['kind']> {
  return SOURCE_ROUTES[s.kind] as unknown as SourceRoute<S, S['kind']>;
}
