/**
 * A requests-per-second budget shared by every request of a run: a token bucket whose waiters
 * are served first come, first served by one timer. `pauseFor` lets the client hold every
 * request back after a 429 that said how long to wait (Retry-After).
 */
export interface RateLimiter {
  /** Resolves when one request may be sent. */
  acquire(): Promise<void>;
  /** Optional: send nothing for `ms` milliseconds (the server asked us to back off). */
  pauseFor?(ms: number): void;
}

export interface TokenBucketOptions {
  requestsPerSecond: number;
  /** Bucket size: how many requests may go out back to back; default max(1, requestsPerSecond). */
  burst?: number;
  /** Injectable clock for tests. */
  now?: () => number;
}

export class TokenBucket implements RateLimiter {
  readonly requestsPerSecond: number;
  readonly burst: number;
  private tokens: number;
  private last: number;
  private pausedUntil = 0;
  private readonly waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(opts: TokenBucketOptions) {
    if (!(opts.requestsPerSecond > 0) || !Number.isFinite(opts.requestsPerSecond)) {
      throw new RangeError(`requestsPerSecond must be a positive number, got ${opts.requestsPerSecond}`);
    }
    this.requestsPerSecond = opts.requestsPerSecond;
    this.burst = Math.max(1, opts.burst ?? opts.requestsPerSecond);
    this.now = opts.now ?? (() => performance.now());
    this.tokens = this.burst;
    this.last = this.now();
  }

  acquire(): Promise<void> {
    this.refill();
    if (this.waiters.length === 0 && this.tokens >= 1 && this.now() >= this.pausedUntil) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  pauseFor(ms: number): void {
    if (!(ms > 0)) return;
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
    // Requests were allowed to burst before the server complained: start again with one token.
    this.tokens = Math.min(this.tokens, 1);
  }

  private refill(): void {
    const t = this.now();
    const elapsed = t - this.last;
    if (elapsed > 0) {
      this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.requestsPerSecond) / 1000);
      this.last = t;
    }
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.refill();
    const t = this.now();
    let wait = 0;
    if (t < this.pausedUntil) wait = this.pausedUntil - t;
    else if (this.tokens < 1) wait = ((1 - this.tokens) * 1000) / this.requestsPerSecond;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.drain();
      },
      Math.max(0, Math.ceil(wait)),
    );
  }

  private drain(): void {
    this.refill();
    while (this.waiters.length > 0 && this.tokens >= 1 && this.now() >= this.pausedUntil) {
      this.tokens -= 1;
      this.waiters.shift()!();
    }
    if (this.waiters.length > 0) this.schedule();
  }
}

export function createRateLimiter(requestsPerSecond: number, burst?: number): TokenBucket {
  return new TokenBucket({ requestsPerSecond, burst });
}
