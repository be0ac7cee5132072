/**
 * One lease protocol for every command that writes or deletes a job's data, so that runs, shards,
 * workers and maintenance exclude each other exactly where they conflict. Two kinds of entry, each
 * a lease object of src/state/lease.ts (conditional writes, renewal, TTL, a dead holder taken over):
 *
 *   _state/<job>/lease.json                   the exclusive entry: a run of the whole job (no shard,
 *                                             no --workers), compact, expire-snapshots,
 *                                             remove-orphan-files, release, rename, retire
 *   _state/<job>/lease-shard-<i>-of-<n>.json  a shared entry: a run of shard i/n (--shard, an
 *                                             engine's index, a worker of `run --workers`), and the
 *                                             parent of `run --workers` (its own shard; 0-of-1 for
 *                                             the whole job)
 *
 * - exclusive: take lease.json (one holder at a time), then list the shared entries; when one is
 *   live (not released, not expired, not a process of this machine that is gone), give lease.json
 *   back and stop with LeaseHeldError naming that entry's holder.
 * - shared: take the shard's own entry (one run of a shard at a time), then read lease.json; when it
 *   is live, give the entry back and stop with LeaseHeldError naming its holder.
 *
 * Both orders are safe: each side writes its entry before it reads the other side's, and the store
 * returns what was written before the read began (S3's GET and LIST are strongly consistent, and so
 * is a local folder). Of an exclusive and a shared acquirer that overlap, whichever reads last sees
 * the other's entry, so they never both go on. So that two starting at the same moment do not both
 * give up, a shared acquirer that finds an exclusive entry taken moments ago reads it again a few
 * times (for up to about 3 s): an exclusive acquirer that saw the shared entry has given its own
 * back by then. Each read comes after the shared entry was written, so the rule holds. Shared entries never look at each other: the shards and
 * workers of a job run side by side (shards of one count never write the same window, see
 * src/run/shard.ts; shards of different counts are not excluded, run one count at a time).
 *
 * Cost beyond the lease itself: a shared acquirer reads one object; an exclusive one lists the
 * shared entries and reads those the listing shows written within MAX_LEASE_TTL_MS (and a margin
 * for clocks): a live entry is rewritten every quarter of its TTL, so an older one has expired.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { pidAlive, thisProcess } from '../process-identity.js';
import type { ObjectStore } from '../store/store.js';
import {
  acquireLease,
  LeaseHeldError,
  leaseKey,
  leaseName,
  MAX_LEASE_TTL_MS,
  parseLease,
  takeable,
  type Lease,
  type LeaseOptions,
  type LeaseRecord,
} from './lease.js';

export interface JobLeaseOptions extends Omit<LeaseOptions, 'name' | 'command'> {
  /** null: the exclusive entry (the whole job); a shard: its shared entry. */
  shard: { index: number; count: number } | null;
  /** What takes it, shown to those it keeps out: `compact`...; default `run`, or `run --shard i/n`. */
  command?: string;
}

/** The shard a `run --workers` parent of the whole job holds: its workers are shards of it. */
export const WHOLE_JOB_SHARD = { index: 0, count: 1 } as const;

/** Clocks of writers, readers and the store may differ by this much (keep them in sync: NTP). */
const CLOCK_MARGIN_MS = 600_000;
const SHARED_PREFIX = 'lease-shard-';
const READS_AT_ONCE = 16;
/** Waits before each new read of an exclusive entry taken within JUST_TAKEN_MS. */
const RECHECK_EXCLUSIVE_MS = [100, 200, 400, 800, 1600];
const JUST_TAKEN_MS = 10_000;

interface Entry {
  key: string;
  record: LeaseRecord;
}

/**
 * Takes the job's entry for `opts.shard` (see the file comment) and checks the other side, or throws
 * LeaseHeldError (exit 75) with the holder's details and holds nothing. The lease renews itself
 * until `release()`.
 */
export async function acquireJobLease(store: ObjectStore, jobName: string, opts: JobLeaseOptions): Promise<Lease> {
  const command = opts.command ?? (opts.shard ? `run --shard ${opts.shard.index}/${opts.shard.count}` : 'run');
  const lease = await acquireLease(store, jobName, { ...opts, command, name: leaseName(opts.shard) });
  try {
    const blocker = opts.shard ? await liveExclusive(store, jobName, opts) : await liveShared(store, jobName, opts);
    if (blocker) {
      opts.logger?.info({ lease: lease.key, held: blocker.key, holder: blocker.record.holder }, 'giving the lease back: the job is busy');
      throw new LeaseHeldError(blocker.key, blocker.record, store.location);
    }
    return lease;
  } catch (err) {
    await lease.release();
    throw err;
  }
}

async function liveExclusive(store: ObjectStore, jobName: string, opts: JobLeaseOptions): Promise<Entry | null> {
  let entry = await liveEntry(store, leaseKey(jobName), opts);
  for (const waitMs of RECHECK_EXCLUSIVE_MS) {
    if (!entry || !justTaken(entry.record, (opts.now ?? Date.now)())) return entry;
    await sleep(waitMs);
    entry = await liveEntry(store, leaseKey(jobName), opts);
  }
  return entry;
}

/** Taken so recently that its holder may still be checking the shared entries (and give it back). */
const justTaken = (record: LeaseRecord, now: number) => now - Date.parse(record.acquired_at) < JUST_TAKEN_MS;

async function liveShared(store: ObjectStore, jobName: string, opts: JobLeaseOptions): Promise<Entry | null> {
  const staleBefore = (opts.now ?? Date.now)() - MAX_LEASE_TTL_MS - CLOCK_MARGIN_MS;
  const keys: string[] = [];
  for await (const o of store.list(leaseKey(jobName, SHARED_PREFIX), { etags: false })) {
    if (!o.key.endsWith('.json') || (o.lastModified && o.lastModified.getTime() < staleBefore)) continue;
    keys.push(o.key);
  }
  const limit = pLimit(READS_AT_ONCE);
  const live = await Promise.all(keys.map((key) => limit(() => liveEntry(store, key, opts))));
  return live.find((e) => e !== null) ?? null;
}

/** The entry at `key` when its holder still holds it; null when absent, unreadable, released, expired or a dead process of this machine. */
async function liveEntry(store: ObjectStore, key: string, opts: JobLeaseOptions): Promise<Entry | null> {
  const got = await store.get(key);
  const record = got ? parseLease(got.body) : null;
  if (!record) return null;
  const now = (opts.now ?? Date.now)();
  return takeable(record, now, opts.identity ?? thisProcess(), opts.isAlive ?? pidAlive) ? null : { key, record };
}
