/**
 * How many chain ids one list or resolve request names. The contract takes 55; a hosted service may take fewer
 * (its own client, thirdweb-dev/js packages/insight, documents 50, and 5 for the deprecated
 * `chain`). The open-source indexer cannot say: it serves one chain per request, named in its path
 * (thirdweb-dev/insight api/api.go GetChainId, commit af5040ef5130d51f6d42d28e1e02060f586e55cd), so
 * the refusal is recognised by its status and words (a 400 naming chains and a limit), not by one
 * message. A request over the run's number is sent as several, and their answers are one: `limit`
 * counts per chain (meta.limit_per_chain), so each chain's rows are those the one request would
 * have held.
 */
import type { Logger } from '../log.js';
import { HttpStatusError } from './errors.js';
import { MAX_CHAIN_IDS, type ListQuery } from './query.js';
import type { ListResponse, ResolveResponse } from './records.js';

const CHAIN_WORD = /\bchain/i;
const LIMIT_WORDS = /too many|at most|maximum|\bmax\b|exceed|limit/i;

/** A 400 or 422 whose message says the request named too many chains. */
export function isChainCountRefusal(err: unknown): err is HttpStatusError {
  if (!(err instanceof HttpStatusError) || (err.status !== 400 && err.status !== 422)) return false;
  const message = err.serverMessage ?? '';
  return CHAIN_WORD.test(message) && LIMIT_WORDS.test(message);
}

/** The run's number of chain ids per request: the setting, halved each time the service refuses it. */
export class ChainsPerRequest {
  private most: number;
  private warned = false;

  constructor(
    most: number,
    private readonly logger: Logger,
  ) {
    this.most = most;
  }

  get current(): number {
    return this.most;
  }

  /** A request naming `sent` chains was refused for their number: at most half of it from now on. false: one chain was refused. */
  refused(sent: number, err: HttpStatusError): boolean {
    if (sent <= 1) return false;
    this.most = Math.min(this.most, Math.floor(sent / 2));
    const fields = { chain_ids_sent: sent, chain_ids_per_request: this.most, answer: err.serverMessage };
    if (this.warned) {
      this.logger.debug(fields, 'chain ids per request halved again');
    } else {
      this.warned = true;
      this.logger.warn(
        fields,
        `the service refused ${sent} chain ids in one request: this run sends at most ${this.most} (halved again if refused); set source.chain_ids_per_request to start there`,
      );
    }
    return true;
  }
}

/** `send` for `q`, split into requests of at most the run's number of chains (halved on a refusal), their answers as one. */
export function inChainBatches<T>(
  q: ListQuery,
  chains: ChainsPerRequest,
  send: (q: ListQuery) => Promise<ListResponse<T>>,
): Promise<ListResponse<T>> {
  return inChainParts(q.chainIds, chains, (chainIds) => send({ ...q, chainIds }), oneAnswer);
}

/** A resolve for `chainIds`, split as a list request is (resolve takes the same chain_id parameter): the blocks, transactions and events of its parts as one answer. */
export function resolveInChainBatches(
  chainIds: number[],
  chains: ChainsPerRequest,
  send: (chainIds: number[]) => Promise<ResolveResponse>,
): Promise<ResolveResponse> {
  return inChainParts(chainIds, chains, send, oneResolve);
}

/** `send` for `chainIds` in parts of at most the run's number (halved on a refusal), `merge`d as the one answer. */
async function inChainParts<A>(
  chainIds: number[],
  chains: ChainsPerRequest,
  send: (chainIds: number[]) => Promise<A>,
  merge: (parts: A[]) => A,
): Promise<A> {
  for (;;) {
    const most = chains.current;
    // More than the contract's limit is a caller's error, refused before sending (validateChainIds), never split.
    if (chainIds.length > most && chainIds.length <= MAX_CHAIN_IDS) {
      const parts: Promise<A>[] = [];
      for (let i = 0; i < chainIds.length; i += most) parts.push(inChainParts(chainIds.slice(i, i + most), chains, send, merge));
      return merge(await Promise.all(parts));
    }
    try {
      return await send(chainIds);
    } catch (err) {
      if (!isChainCountRefusal(err) || !chains.refused(chainIds.length, err)) throw err;
    }
  }
}

/** The answers of one request's chains, asked in parts, as the one answer. */
function oneAnswer<T>(parts: ListResponse<T>[]): ListResponse<T> {
  const first = parts[0]!;
  const aggregations = parts.some((p) => p.aggregations !== null) ? parts.flatMap((p) => p.aggregations ?? []) : null;
  return {
    meta: {
      ...first.meta,
      chain_ids: parts.flatMap((p) => p.meta.chain_ids),
      total_items: parts.reduce((n, p) => n + p.meta.total_items, 0),
      total_pages: Math.max(...parts.map((p) => p.meta.total_pages)),
    },
    data: parts.flatMap((p) => p.data),
    aggregations,
  };
}

/** A resolve's answers for its chains, asked in parts, as the one answer: what each part found, the first type and address any part names. */
function oneResolve(parts: ResolveResponse[]): ResolveResponse {
  const first = parts[0]!;
  const named = parts.find((p) => p.data.type !== 'unknown') ?? first;
  return {
    meta: { ...first.meta, chain_ids: parts.flatMap((p) => p.meta.chain_ids) },
    data: {
      type: named.data.type,
      blocks: parts.flatMap((p) => p.data.blocks),
      transactions: parts.flatMap((p) => p.data.transactions),
      events: parts.flatMap((p) => p.data.events),
      address: parts.find((p) => p.data.address !== null)?.data.address ?? null,
    },
  };
}
