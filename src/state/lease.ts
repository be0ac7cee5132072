/**
 * One run of a job at a time: a lease object beside the job's state, taken and kept with
 * conditional writes only, so it works the same on S3 (If-None-Match / If-Match) and on a local
 * directory (LocalStore's link/lock compare-and-swap).
 *
 *   _state/<job>/lease.json                  { holder, run_id, command, host, pid, boot_id, acquired_at, renewed_at, expires_at }
 *   _state/<job>/lease-shard-<i>-of-<n>.json the same for one shard of a sharded run
 *
 * This file keeps one such object; which objects a command takes, so that runs, shards and
 * maintenance exclude each other where they conflict, is src/state/job-lease.ts.
 *
 * - acquire: create with If-None-Match: *. When the object exists and its holder's lease has
 *   expired, was released, or names a process of this machine that is gone (same host and boot,
 *   pid not alive), it is taken over with If-Match on the ETag that was read: of several runs
 *   racing for it, exactly one wins. Otherwise the run stops with LeaseHeldError.
 * - renew: every ttl/4, If-Match on the ETag of our last write. A refused renewal means another
 *   run took the lease over (ours had expired): `lost` fires and the run stops writing.
 *   `assertHeld()` is checked before every state write: a run that could not renew in time (a
 *   paused process, an unreachable store) stops before it writes, not after.
 * - release: the lease is rewritten as released (If-Match), so the next run takes it at once.
 *
 * Expiry compares the writer's clock with the reader's: keep clocks in sync (NTP) and the TTL
 * well above the skew. A crashed holder on another machine blocks the job for at most the TTL.
 */
import { ExitCode, InsightExportError, UserInputError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { PreconditionFailedError } from '../store/errors.js';
import type { ObjectStore } from '../store/store.js';
import { isDeadHere, pidAlive, thisProcess, type ProcessIdentity } from '../process-identity.js';

export interface LeaseRecord {
  /** `host:pid` of the holder, for people reading the object. */
  holder: string;
  run_id: string;
  /** What holds it: `run`, `run --shard 1/4`, `compact`... (absent in leases of older versions). */
  command?: string;
  host: string;
  pid: number;
  /** Linux boot id and pid namespace: a pid is only compared with processes of the same boot and namespace. */
  boot_id: string | null;
  acquired_at: string;
  renewed_at: string;
  expires_at: string;
  released?: boolean;
}

export interface LeaseOptions {
  runId: string;
  /** What takes it, for the holder details others are shown (see LeaseRecord.command). */
  command?: string;
  /** How long a lease stays valid without renewal (default 120 s, at most MAX_LEASE_TTL_MS). */
  ttlMs?: number;
  /** Renewal period (default ttl / 4). */
  renewEveryMs?: number;
  /** Lease object name under `_state/<job>/` (default `lease.json`; see leaseName for shards). */
  name?: string;
  logger?: Logger;
  /** For tests: the clock and the identity of this process. */
  now?: () => number;
  identity?: ProcessIdentity;
  /** For tests: whether a pid of this machine is alive. */
  isAlive?: (pid: number) => boolean;
}

export const DEFAULT_LEASE_TTL_MS = 120_000;
/** The longest TTL a lease may have: a lease object not rewritten for longer has expired (src/state/job-lease.ts relies on it). */
export const MAX_LEASE_TTL_MS = 3_600_000;

/** Another run of the same job holds the lease. Exit code 75 (EX_TEMPFAIL: try again later). */
export class LeaseHeldError extends InsightExportError {
  override name = 'LeaseHeldError';
  override readonly exitCode = ExitCode.busy;
  readonly holder: LeaseRecord;
  constructor(key: string, holder: LeaseRecord, location: string) {
    const who = holder.command === undefined || holder.command.startsWith('run') ? 'Another run' : `\`${holder.command}\``;
    super(`${who} of this job is in progress (run ${holder.run_id} on ${holder.holder}); nothing was written`, {
      details:
        `${location} ${key}: ${holder.command ? `${holder.command}, ` : ''}held until ${holder.expires_at} ` +
        `(since ${holder.acquired_at}, renewed at ${holder.renewed_at})`,
      hint: 'Wait for it to finish. If it crashed on another machine, its lease expires at the time above and the next run takes over.',
    });
    this.holder = holder;
  }
}

/** This run's lease was taken over or could not be renewed in time: it stopped writing. */
export class LeaseLostError extends InsightExportError {
  override name = 'LeaseLostError';
  constructor(key: string, reason: string) {
    super('This run lost its lease on the job and stopped writing', {
      details: `${key}: ${reason}`,
      hint: 'Another run may be exporting this job now; windows this run did not complete are exported by the next run.',
    });
  }
}

/** `lease.json`, or `lease-shard-<i>-of-<n>.json` for one shard of a sharded run. */
export function leaseName(shard?: { index: number; count: number } | null): string {
  return shard ? `lease-shard-${shard.index}-of-${shard.count}.json` : 'lease.json';
}

export function leaseKey(jobName: string, name = 'lease.json'): string {
  return `_state/${jobName}/${name}`;
}

export class Lease {
  /** Aborted (with a LeaseLostError as reason) when the lease is lost. */
  readonly lost: AbortSignal;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> = Promise.resolve();
  private renewalInFlight = false;
  private released = false;

  constructor(
    private readonly store: ObjectStore,
    readonly key: string,
    private record: LeaseRecord,
    private etag: string,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly logger: Logger | undefined,
  ) {
    this.lost = this.controller.signal;
  }

  get expiresAt(): number {
    return Date.parse(this.record.expires_at);
  }

  get runId(): string {
    return this.record.run_id;
  }

  /** Throws LeaseLostError unless the lease is held and valid for a while yet (a tenth of the TTL). */
  assertHeld(): void {
    if (this.lost.aborted) throw this.lost.reason as Error;
    const margin = Math.min(this.ttlMs / 10, 10_000);
    if (this.now() > this.expiresAt - margin) {
      this.lose(`not renewed in time (valid until ${this.record.expires_at})`);
      throw this.lost.reason as Error;
    }
  }

  startRenewing(everyMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A store slower than the period must not pile renewals up behind each other.
      if (this.renewalInFlight) return;
      this.renewalInFlight = true;
      this.renewing = this.renew()
        .catch(() => undefined)
        .finally(() => {
          this.renewalInFlight = false;
        });
    }, everyMs);
    this.timer.unref();
  }

  /** Extends the lease by the TTL (If-Match on our last write). Failures other than losing it are retried at the next period. */
  async renew(): Promise<void> {
    if (this.released || this.lost.aborted) return;
    const now = this.now();
    const next: LeaseRecord = { ...this.record, renewed_at: iso(now), expires_at: iso(now + this.ttlMs) };
    try {
      const { etag } = await this.store.put(this.key, JSON.stringify(next), { ifMatch: this.etag, contentType: 'application/json' });
      this.record = next;
      this.etag = etag;
    } catch (err) {
      if (err instanceof PreconditionFailedError) {
        this.lose('another run took the lease over');
      } else {
        this.logger?.warn({ lease: this.key, err: errorMessage(err) }, 'lease renewal failed; retrying');
        if (this.now() > this.expiresAt) this.lose(`not renewed before it expired (${errorMessage(err).split('\n')[0]})`);
      }
    }
  }

  /** Stops renewing and marks the lease released so the next run takes it at once. Never throws. */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
    if (this.released) return;
    this.released = true;
    if (this.lost.aborted) return;
    const now = this.now();
    const done: LeaseRecord = { ...this.record, renewed_at: iso(now), expires_at: iso(now), released: true };
    try {
      await this.store.put(this.key, JSON.stringify(done), { ifMatch: this.etag, contentType: 'application/json' });
    } catch (err) {
      // Expired and taken over, or the store is unreachable: the lease expires on its own.
      this.logger?.warn({ lease: this.key, err: errorMessage(err) }, 'lease not released; it expires on its own');
    }
  }

  private lose(reason: string): void {
    if (this.lost.aborted) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.logger?.error({ lease: this.key, reason }, 'lease lost: stopping');
    this.controller.abort(new LeaseLostError(this.key, reason));
  }
}

/**
 * Takes the job's lease (see the file comment) or throws LeaseHeldError. The returned lease
 * renews itself until `release()`.
 */
export async function acquireLease(store: ObjectStore, jobName: string, opts: LeaseOptions): Promise<Lease> {
  const ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  if (!(ttlMs > 0 && ttlMs <= MAX_LEASE_TTL_MS))
    throw new UserInputError(`A lease TTL of ${ttlMs} ms is out of range`, {
      hint: `Give a TTL above 0 and at most ${MAX_LEASE_TTL_MS} ms (1 h).`,
    });
  const now = opts.now ?? Date.now;
  const me = opts.identity ?? thisProcess();
  const isAlive = opts.isAlive ?? pidAlive;
  const key = leaseKey(jobName, opts.name);
  const fresh = (): LeaseRecord => {
    const t = now();
    return {
      holder: `${me.host}:${me.pid}`,
      run_id: opts.runId,
      ...(opts.command === undefined ? {} : { command: opts.command }),
      host: me.host,
      pid: me.pid,
      boot_id: me.bootId,
      acquired_at: iso(t),
      renewed_at: iso(t),
      expires_at: iso(t + ttlMs),
    };
  };
  const body = (r: LeaseRecord) => JSON.stringify(r);

  for (let attempt = 0; attempt < 5; attempt++) {
    let record = fresh();
    try {
      const { etag } = await store.put(key, body(record), { ifNoneMatch: '*', contentType: 'application/json' });
      return started(new Lease(store, key, record, etag, ttlMs, now, opts.logger), opts, ttlMs);
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
    }
    const current = await store.get(key);
    if (!current) continue; // released and deleted meanwhile: create again
    const held = parseLease(current.body);
    if (held && !takeable(held, now(), me, isAlive)) throw new LeaseHeldError(key, held, store.location);
    if (!held) opts.logger?.warn({ lease: key }, 'lease object is not readable: taking it over');
    else if (!held.released)
      opts.logger?.warn(
        { lease: key, holder: held.holder, run: held.run_id, expires_at: held.expires_at },
        'taking over the lease of a run that crashed or stalled',
      );
    record = fresh();
    try {
      const { etag } = await store.put(key, body(record), { ifMatch: current.etag, contentType: 'application/json' });
      return started(new Lease(store, key, record, etag, ttlMs, now, opts.logger), opts, ttlMs);
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
      // Another run took it over first: read again (it is most likely held now).
    }
  }
  const last = await store.get(key);
  const held = last ? parseLease(last.body) : null;
  if (held) throw new LeaseHeldError(key, held, store.location);
  throw new InsightExportError('Could not take the lease of this job: it kept changing', {
    details: `${store.location} ${key}`,
    hint: 'Several runs of the job are starting at once; run again.',
  });
}

function started(lease: Lease, opts: LeaseOptions, ttlMs: number): Lease {
  lease.startRenewing(opts.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 4)));
  return lease;
}

/** Can a run take this lease over? Expired, released, or its holder process on this machine is gone. */
export function takeable(
  held: LeaseRecord,
  nowMs: number,
  me: { host: string; bootId: string | null },
  isAlive: (pid: number) => boolean,
): boolean {
  if (held.released) return true;
  const expires = Date.parse(held.expires_at);
  if (!Number.isFinite(expires) || nowMs >= expires) return true;
  return isDeadHere({ host: held.host, pid: held.pid, bootId: held.boot_id }, me, isAlive);
}

export function parseLease(body: Buffer): LeaseRecord | null {
  try {
    const r = JSON.parse(body.toString('utf8')) as Partial<LeaseRecord>;
    if (typeof r !== 'object' || r === null || typeof r.expires_at !== 'string' || typeof r.run_id !== 'string') return null;
    return {
      holder: String(r.holder ?? `${r.host ?? '?'}:${r.pid ?? '?'}`),
      run_id: r.run_id,
      ...(typeof r.command === 'string' ? { command: r.command } : {}),
      host: String(r.host ?? ''),
      pid: Number(r.pid),
      boot_id: typeof r.boot_id === 'string' ? r.boot_id : null,
      acquired_at: String(r.acquired_at ?? ''),
      renewed_at: String(r.renewed_at ?? ''),
      expires_at: r.expires_at,
      ...(r.released === true ? { released: true } : {}),
    };
  } catch {
    return null;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
