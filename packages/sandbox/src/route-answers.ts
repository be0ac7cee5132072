import type { IncomingMessage } from 'node:http';
import type { EventRecord, TransactionRecord } from '../../../src/shared-with-sandbox.js';
import type { ListResult, ReadInterfaceSource } from './data.js';
import { SandboxHttpError, badRequest } from './errors.js';
import { okMisbehaviour } from './ok-misbehaviour.js';
import {
  FOREIGN_EVENT_KINDS,
  FOREIGN_TRANSACTION_KINDS,
  foreignEvent,
  foreignTransaction,
  injectForeignRows,
  type ForeignCounts,
} from './foreign-rows.js';
import type { RequestStats } from './request-stats.js';
import { hash3 } from './prng.js';
import { CONTRACT_PAGING, INDEXER_PAGING, parseChainIds } from './query.js';
import { parseEventSignature } from './abi.js';
import { indexerTransaction, isIndexerSearchInput, omitEmptyMeta } from './indexer-wire.js';
import type { Matched } from './routes.js';
import type { SandboxOptions } from './options.js';
import { refuseTooManyChains } from './chain-limit.js';

export interface Answer {
  status: number;
  body: unknown;
}

const MAX_BODY = 16 * 1024 * 1024;

function isAggregated(q: { groupBy: unknown[]; aggregates: unknown[] }): boolean {
  return q.groupBy.length > 0 || q.aggregates.length > 0;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw badRequest('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('request body is not valid JSON');
  }
}

/**
 * Rows of a list answer as sent: chain_id a string, no `decoded` unless asked for, and with
 * `legacyTypes` about a quarter of the rows (by chain and row) in older wire types.
 */
function wireRows<T extends { chain_id: number }>(
  opts: SandboxOptions,
  result: ListResult<T>,
  decode: boolean,
  legacy: (out: Record<string, unknown>, rec: T) => void,
): unknown[] {
  const rows = result.data ?? [];
  return rows.map((rec, i) => {
    const out: Record<string, unknown> = { ...rec, chain_id: String(rec.chain_id) };
    if (!decode) delete out.decoded;
    if (opts.legacyTypes && hash3(rec.chain_id, result.rowKeys![i]!, 0x1e6) % 4 === 0) legacy(out, rec);
    return out;
  });
}

function wireTransactions(opts: SandboxOptions, result: ListResult<TransactionRecord>, decode: boolean): unknown[] {
  const rows = wireRows(opts, result, decode, (out, rec) => {
    out.block_number = String(rec.block_number);
    out.value = Number(rec.value);
  });
  return opts.indexerRecords ? rows.map((r) => indexerTransaction(r as Record<string, unknown>)) : rows;
}

function wireEvents(opts: SandboxOptions, result: ListResult<EventRecord>, decode: boolean): unknown[] {
  return wireRows(opts, result, decode, (out, rec) => {
    out.block_number = String(rec.block_number);
  });
}

function listBody<T>(opts: SandboxOptions, result: ListResult<T>, wire: unknown[]): unknown {
  const meta = opts.omitEmpty ? omitEmptyMeta(result.meta) : result.meta;
  if (result.aggregations) return { meta, aggregations: result.aggregations };
  return opts.omitEmpty ? { meta, data: wire } : { meta, data: wire, aggregations: null };
}

/** resolve/<input>: the service's search of a block, transaction, address or name. */
function resolveAnswer(data: ReadInterfaceSource, opts: SandboxOptions, input: string, q: URLSearchParams): Answer {
  if (opts.strictResolve && !isIndexerSearchInput(input)) throw badRequest(`invalid input '${input}'`);
  refuseTooManyChains(opts, q);
  const r = data.resolve(input, parseChainIds(q));
  const d = r.data;
  if (opts.panicsAs500 && /^\d+$/.test(input) && d.blocks.length === 0) {
    throw new SandboxHttpError(500, `block ${input} is not indexed`, undefined, { emptyBody: true });
  }
  const wire: Record<string, unknown> = {
    ...d,
    transactions: d.transactions.map((t) => {
      const out = { ...t, chain_id: String(t.chain_id) };
      return opts.indexerRecords ? indexerTransaction(out) : out;
    }),
    events: d.events.map((e) => ({ ...e, chain_id: String(e.chain_id) })),
  };
  if (opts.strictResolve) {
    delete wire.address;
    if (d.type === 'unknown') delete wire.type;
  }
  if (opts.omitEmpty) for (const k of ['blocks', 'transactions', 'events'] as const) if (d[k].length === 0) delete wire[k];
  return { status: 200, body: { meta: opts.omitEmpty ? omitEmptyMeta(r.meta) : r.meta, data: wire } };
}

function nftParams(opts: SandboxOptions, q: URLSearchParams) {
  const chainIds = parseChainIds(q);
  return {
    chainId: chainIds?.[0],
    types: (q.get('type') ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== ''),
    after: q.get('token_contract_address_hash'),
    afterType: q.get('token_type'),
    afterId: q.get('token_id'),
    pageSize: opts.nftPageSize ?? 50,
    query: Object.fromEntries(q),
    shape: {
      instanceLimit: opts.nftInstanceLimit,
      distinctAmount: opts.nftDistinctAmount,
      checksummed: opts.nftChecksummed,
      tokenKeys: opts.nftTokenKeys,
      typeOrder: opts.nftTypeOrder,
      echoPageParams: opts.nftEchoPageParams,
    },
  };
}

/** Answers a request of a route; list and resolve routes answer from `source` (default: the data the answers were made over). */
export type RouteAnswers = (m: Matched, url: URL, req: IncomingMessage, source?: ReadInterfaceSource) => Promise<Answer>;

/**
 * What each route answers over `data`, shaped by the wire options of `opts` (legacy types,
 * indexer records, omitted empties, foreign rows, the ok-but-not-a-page misbehaviours). A thrown
 * SandboxHttpError is an error answer. The foreign rows sent are counted in `stats`.
 */
export function routeAnswers(data: ReadInterfaceSource, opts: SandboxOptions, stats: RequestStats): RouteAnswers {
  const paging = opts.indexerLimits ? INDEXER_PAGING : CONTRACT_PAGING;
  const seed = opts.seed ?? 42;
  // Whatever varies per list request derives from this counter, so a run of requests is reproducible.
  let listRequests = 0;
  const listOpts = (requestKey: number) => ({
    duplicateSelfTransfers: opts.duplicateSelfTransfers,
    decodedVariants: opts.decodedVariants,
    walletUnion: opts.walletUnion,
    unstableOrder: opts.unstableOrder,
    repeatEarlierRows: opts.repeatEarlierRows,
    goValues: opts.goValues,
    goAggregations: opts.goAggregations,
    requestKey,
  });

  /** A list answer, or with the `ok*` rates a misbehaving 200 instead of it (whose foreign rows, if any, were not sent). */
  function listAnswer(rowsAsked: boolean, answer: (requestKey: number) => { body: unknown; foreign: ForeignCounts }): Answer {
    const requestKey = hash3(seed, ++listRequests, 0x4e9);
    const mis = okMisbehaviour(requestKey, rowsAsked, opts);
    if (mis) return { status: 200, body: mis(() => answer(requestKey).body) };
    const { body, foreign } = answer(requestKey);
    stats.foreignRows(foreign);
    return { status: 200, body };
  }

  function transactions(src: ReadInterfaceSource, wallet: string, q: URLSearchParams): Answer {
    refuseTooManyChains(opts, q);
    const query = src.parseTransactionsQuery(q, paging);
    return listAnswer(!isAggregated(query), (key) => {
      const result = src.walletTransactions(wallet, query, listOpts(key));
      const foreign = injectForeignRows(result, query, opts.foreignRows ?? 0, key, FOREIGN_TRANSACTION_KINDS, foreignTransaction);
      return { body: listBody(opts, result, wireTransactions(opts, result, query.decode)), foreign };
    });
  }

  function events(src: ReadInterfaceSource, contract: string, signature: string, q: URLSearchParams): Answer {
    refuseTooManyChains(opts, q);
    if (opts.panicsAs500) {
      try {
        parseEventSignature(signature);
      } catch {
        throw new SandboxHttpError(500, 'unparsable event signature', undefined, { emptyBody: true });
      }
    }
    const query = src.parseEventsQuery(q, paging);
    return listAnswer(!isAggregated(query), (key) => {
      const result = src.contractEvents(contract, signature, query, listOpts(key));
      const foreign = injectForeignRows(result, query, opts.foreignRows ?? 0, key, FOREIGN_EVENT_KINDS, foreignEvent);
      return { body: listBody(opts, result, wireEvents(opts, result, query.decode || opts.goValues === true)), foreign };
    });
  }

  return async (m, url, req, source = data) => {
    const q = url.searchParams;
    switch (m.route) {
      case 'transactions':
        return transactions(source, m.params[0]!, q);
      case 'events':
        return events(source, m.params[0]!, m.params[1]!, q);
      case 'resolve':
        return resolveAnswer(source, opts, m.params[0]!, q);
      case 'decode':
        return { status: 200, body: data.decode(m.params[0]!, await readJson(req), parseChainIds(q)) };
      case 'nft':
        return { status: 200, body: data.nftCollectionsPage(m.params[0]!, nftParams(opts, q)) };
      case 'nft-list':
        return { status: 200, body: data.nftInstancesPage(m.params[0]!, nftParams(opts, q)) };
    }
  };
}
