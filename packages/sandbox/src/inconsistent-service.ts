import type { ReadInterfaceSource } from './data.js';
import { fullPageCutter } from './cut-full-pages.js';
import { Inconsistencies, type InconsistencyOptions } from './inconsistencies.js';
import { laggingReplica, replicaHeight } from './replica-lag.js';
import type { RequestStats } from './request-stats.js';
import type { Answer } from './route-answers.js';
import type { Matched } from './routes.js';
import { SerialisedBody, StaleCache, reorgGeneration } from './stale-cache.js';
import { emptyAnswer, hasRows, millisecondTimestamps, neighbourSliceUrl } from './wrong-answers.js';

/** The service's own answer to a request (`url` may be another slice's), from `source` (default: the full index). */
export type Origin = (url: URL, source?: ReadInterfaceSource) => Promise<Answer>;

const isList = (route: string) => route === 'transactions' || route === 'events';

/**
 * The read routes as an inconsistent service answers them (src/sandbox/inconsistencies.ts): a
 * stale cache in front, then a proxy answering a neighbouring slice, a lagging replica beside the
 * full index, and on the way back empty rows, block times in milliseconds and cut full pages.
 * Without any of them on, the origin's answer passes unchanged.
 */
export class InconsistentService {
  readonly inconsistencies: Inconsistencies;
  private readonly replica: ReadInterfaceSource;
  private readonly cache: StaleCache;
  private readonly cutter: (route: string, url: URL, body: unknown) => unknown;

  private readonly stats: RequestStats;
  private readonly replies: { text(body: unknown): string };

  constructor(c: {
    /** The data the full index serves (its chains say where the newest block is, its branches when it reorganised). */
    data: unknown;
    full: ReadInterfaceSource;
    /** The full index's height (indexedUntil). */
    fullUntil: () => number | undefined;
    opts: InconsistencyOptions & { seed?: number | undefined };
    stats: RequestStats;
    /** How bodies are written (the stale cache keeps the text sent). */
    replies: { text(body: unknown): string };
  }) {
    const seed = c.opts.seed ?? 42;
    const inc = (this.inconsistencies = new Inconsistencies(c.opts, seed));
    this.stats = c.stats;
    this.replies = c.replies;
    this.replica = laggingReplica(
      c.full,
      () => replicaHeight(c.data, c.fullUntil(), inc.options),
      () => c.stats.inconsistency('replicaLagMissed'),
    );
    this.cache = new StaleCache(() => reorgGeneration(c.data));
    this.cutter = fullPageCutter(() => inc.options.cutFullPages ?? 0, seed);
  }

  async answer(m: Matched, url: URL, origin: Origin): Promise<Answer> {
    const inc = this.inconsistencies;
    inc.request();
    const cached = isList(m.route) || m.route === 'resolve';
    const key = url.pathname + url.search;
    const caching = cached && (inc.options.staleCache ?? 0) > 0;
    const stale = caching ? this.cache.stale(key) : null;
    if (stale && inc.draw('staleCache')) {
      this.stats.inconsistency('staleCache');
      return { status: 200, body: stale };
    }
    const asked = isList(m.route) ? this.neighbour(url) : url;
    const lagging = cached && inc.draw('replicaLag');
    if (lagging) this.stats.inconsistency('replicaLag');
    const answered = await origin(asked, lagging ? this.replica : undefined);
    if (answered.status !== 200) return answered;
    let body = isList(m.route) ? this.wrongRows(answered.body) : answered.body;
    const cut = this.cutter(m.route, url, body);
    if (cut !== body) this.stats.inconsistency('cutFullPage');
    body = cut;
    if (!caching) return { status: 200, body };
    const text = this.replies.text(body);
    this.cache.keep(key, text);
    return { status: 200, body: new SerialisedBody(text) };
  }

  /** The URL of the neighbouring slice at the neighbourSlices rate, else `url`. */
  private neighbour(url: URL): URL {
    const inc = this.inconsistencies;
    if (!inc.draw('neighbourSlices')) return url;
    const other = neighbourSliceUrl(url, inc.coin('neighbourSlices'));
    if (other) this.stats.inconsistency('neighbourSlice');
    return other ?? url;
  }

  /** A row answer emptied or in milliseconds at their rates (drawn for answers with rows only). */
  private wrongRows(body: unknown): unknown {
    const inc = this.inconsistencies;
    if (!hasRows(body)) return body;
    if (inc.draw('emptyAnswers')) {
      this.stats.inconsistency('emptyAnswer');
      return emptyAnswer(body);
    }
    if (!inc.draw('millisecondTimestamps')) return body;
    this.stats.inconsistency('millisecondTimestamps');
    return millisecondTimestamps(body);
  }
}
