/**
 * A service that answers wrong for a while and then becomes consistent again: replicas at
 * different index heights behind one address, a CDN serving answers cached before a
 * reorganisation, an index shard briefly missing, a page with block times in milliseconds, a
 * proxy answering a neighbouring slice, a proxy cutting full pages. Each is a rate drawn per
 * request from the sandbox's seed and a count of the requests it applies to, so a run of requests
 * is answered the same way every time; each can be changed while the server runs
 * (SandboxServer.setInconsistencies) and all end together with SandboxServer.consistent(),
 * `POST /_sandbox/consistent` or after `consistentAfterRequests` requests.
 */
import { SandboxOptionsError } from './errors.js';
import { hash3, unit } from './prng.js';

export interface InconsistencyOptions {
  /**
   * Rate (0..1) of requests (rows, count()/aggregates and resolve alike) answered by a lagging
   * replica: an index that reaches `replicaLagUntil` (unix seconds), or `replicaLagBehindSeconds`
   * before the newest block the full index serves (default a day), and knows no row, count or
   * block after that.
   */
  replicaLag?: number;
  /** The lagging replica's index reaches this block time (unix seconds); wins over replicaLagBehindSeconds. */
  replicaLagUntil?: number;
  /** The lagging replica is this many seconds behind the newest block the full index serves (default 86_400). */
  replicaLagBehindSeconds?: number;
  /**
   * Rate (0..1) of requests (list and resolve routes) whose URL a CDN cached before the latest
   * reorganisation that get the cached body (the first one that URL got) instead of the service's
   * answer. The cache fills while the rate is above 0.
   */
  staleCache?: number;
  /** Rate (0..1) of row answers that had rows and come back as HTTP 200 with `data: []` (an index shard briefly missing). */
  emptyAnswers?: number;
  /** Rate (0..1) of row answers whose rows carry `block_timestamp` in milliseconds. */
  millisecondTimestamps?: number;
  /**
   * Rate (0..1) of row requests bounded on block_number (else block_timestamp) below and above
   * that get the answer of the same-width range just below or just above (drawn per request).
   */
  neighbourSlices?: number;
  /**
   * Rate (0..1) of list answers whose full pages lose their last row (each chain with `limit` rows
   * sends `limit - 1`; pages of limit 1 are spared), as a broken proxy or CDN does: a page a client
   * cannot tell from a short one.
   */
  cutFullPages?: number;
  /** After this many requests on the read routes, the inconsistencies above stop: the service is consistent again. */
  consistentAfterRequests?: number;
}

/** What each inconsistency did, counted in SandboxStats.inconsistencies. */
export type InconsistencyKind =
  /** Answered by the lagging replica. */
  | 'replicaLag'
  /** Answered by the lagging replica, which lacked rows or blocks the full index has for that request. */
  | 'replicaLagMissed'
  | 'staleCache'
  | 'emptyAnswer'
  | 'millisecondTimestamps'
  | 'neighbourSlice'
  | 'cutFullPage';

/** The rates, each with its own draw. */
export const INCONSISTENCY_RATES = [
  'replicaLag',
  'staleCache',
  'emptyAnswers',
  'millisecondTimestamps',
  'neighbourSlices',
  'cutFullPages',
] as const satisfies readonly (keyof InconsistencyOptions)[];
/** The rates drawn here (cutFullPages keeps its own draw: src/sandbox/cut-full-pages.ts). */
type RateKey = Exclude<(typeof INCONSISTENCY_RATES)[number], 'cutFullPages'>;

const ALL_KEYS: (keyof InconsistencyOptions)[] = [
  ...INCONSISTENCY_RATES,
  'replicaLagUntil',
  'replicaLagBehindSeconds',
  'consistentAfterRequests',
];

/** Throws a SandboxOptionsError for a rate outside 0..1 or a time or count that is not a whole number. */
export function validateInconsistencies(o: InconsistencyOptions): void {
  for (const key of INCONSISTENCY_RATES) {
    const r = o[key];
    if (r !== undefined && !(Number.isFinite(r) && r >= 0 && r <= 1))
      throw new SandboxOptionsError(`invalid ${key} ${r}`, { hint: 'a rate is a number in 0..1' });
  }
  if (o.replicaLagUntil !== undefined && !Number.isSafeInteger(o.replicaLagUntil))
    throw new SandboxOptionsError(`invalid replicaLagUntil ${o.replicaLagUntil}`, { hint: 'a block time in unix seconds' });
  for (const key of ['replicaLagBehindSeconds', 'consistentAfterRequests'] as const) {
    const n = o[key];
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0))
      throw new SandboxOptionsError(`invalid ${key} ${n}`, { hint: 'a whole number, 0 or more' });
  }
}

const SALT: Record<RateKey, number> = {
  replicaLag: 0x4e91,
  staleCache: 0x5ca1,
  emptyAnswers: 0xe3b7,
  millisecondTimestamps: 0x3e3,
  neighbourSlices: 0x9b5,
};

/** The inconsistencies in force, changeable while the server runs; draws per knob from the seed and the knob's own count. */
export class Inconsistencies {
  private current: InconsistencyOptions;
  private readonly draws: Record<RateKey, number> = {
    replicaLag: 0,
    staleCache: 0,
    emptyAnswers: 0,
    millisecondTimestamps: 0,
    neighbourSlices: 0,
  };
  private requests = 0;

  constructor(
    opts: InconsistencyOptions,
    private readonly seed: number,
  ) {
    this.current = pick(opts);
  }

  /** Changes the options given (undefined ones are left as they are). */
  set(patch: InconsistencyOptions): void {
    validateInconsistencies(patch);
    this.current = { ...this.current, ...pick(patch) };
  }

  /** Every inconsistency ends now. */
  consistent(): void {
    this.current = {};
  }

  /** A request on a read route arrived (counted towards consistentAfterRequests). */
  request(): void {
    this.requests++;
    const after = this.current.consistentAfterRequests;
    if (after !== undefined && this.requests > after) this.consistent();
  }

  get options(): Readonly<InconsistencyOptions> {
    return this.current;
  }

  /** True at the knob's rate, drawn from the seed and the knob's count (a rate of 0 draws nothing). */
  draw(key: RateKey): boolean {
    const rate = this.current[key] ?? 0;
    if (!(rate > 0)) return false;
    return unit(hash3(this.seed, ++this.draws[key], SALT[key])) < rate;
  }

  /** A second, independent choice for the request the last draw of `key` was for (e.g. below or above). */
  coin(key: RateKey): boolean {
    return (hash3(this.seed ^ SALT[key], this.draws[key], 0x2) & 1) === 1;
  }
}

function pick(o: InconsistencyOptions): InconsistencyOptions {
  return Object.fromEntries(ALL_KEYS.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}
