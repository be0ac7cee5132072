/**
 * Streams the job no longer has whose windows are still at the destination: a target or chain
 * taken out of the job file (`chains: [1, 8453]` -> `[8453]`), or a target whose query changed.
 * Their files are still read by a glob over the table's folders, while the job's own checks (plan,
 * verify, the DDL's partitions) see only the streams it has. `plan` and `run` name them; `retire`
 * removes them (files, state, claims) or keeps them (recorded, and no longer named).
 *
 *   _state/<job>/kept-streams.json   { format: 1, streams: [<stream key>...] }  kept on purpose
 *   _state/<job>/retiring.json       { format: 1, streams, files, claims }      a removal under way
 *
 * A removal records what it deletes before it deletes anything, then deletes the streams' state
 * (so no command counts their windows any more), their files, their claims, and last the record:
 * interrupted, the next `retire --delete` finishes it from the record.
 */
import type { Job } from '../job/job.js';
import type { Interval } from '../plan/index.js';
import { parseStreamKey } from '../plan/stream-key.js';
import { jobStreams } from '../plan/streams.js';
import { UserInputError } from '../errors.js';
import type { ObjectStore } from '../store/store.js';
import { claimName, OWNERS_ROOT } from './owners.js';
import { WindowState } from './window-state.js';

/** A stream with windows at the destination that the job no longer has. */
export interface RemovedStream {
  unit: string;
  windows: number;
}

/** What `plan` and `run` report of them: the streams, and what to do. */
export interface RemovedStreamsNote {
  streams: RemovedStream[];
  next: string;
}

interface Retiring {
  format: 1;
  streams: string[];
  files: string[];
  claims: string[];
}

/** The state folders holding a stream's windows and records, each `<folder>/<stream key>(/...|.json)`. */
const STREAM_FOLDERS = ['units', 'segments', 'completed', 'pending', 'settled', 'checked', 'repair'];

const keptKey = (job: string) => `_state/${job}/kept-streams.json`;
const retiringKey = (job: string) => `_state/${job}/retiring.json`;

async function readJson<T>(store: ObjectStore, key: string): Promise<T | null> {
  const got = await store.get(key);
  return got ? (JSON.parse(got.body.toString('utf8')) as T) : null;
}

export async function readKeptStreams(store: ObjectStore, jobName: string): Promise<Set<string>> {
  return new Set((await readJson<{ streams: string[] }>(store, keptKey(jobName)))?.streams ?? []);
}

/** The streams `listed` (completed windows by stream key) holds that the job has not, nor keeps (`withKept`: kept too). */
export async function removedStreams(
  store: ObjectStore,
  job: Job,
  listed: ReadonlyMap<string, Interval[]>,
  opts: { withKept?: boolean } = {},
): Promise<RemovedStream[]> {
  const own = new Set(jobStreams(job).map((s) => s.unitKey));
  const kept = opts.withKept ? new Set<string>() : await readKeptStreams(store, job.name);
  return [...listed]
    .filter(([unit, windows]) => windows.length > 0 && !own.has(unit) && !kept.has(unit))
    .map(([unit, windows]) => ({ unit, windows: windows.length }))
    .sort((a, b) => a.unit.localeCompare(b.unit));
}

/** The note `plan` and `run` give (null when there is nothing to say). */
export async function removedStreamsNote(
  store: ObjectStore,
  job: Job,
  listed: ReadonlyMap<string, Interval[]>,
): Promise<RemovedStreamsNote | null> {
  const streams = await removedStreams(store, job, listed);
  if (streams.length === 0) return null;
  return {
    streams,
    next:
      'their files are still at the destination (a glob over the table reads them; verify and the DDL do not count them): ' +
      '`insight-export retire <job file> --delete` removes their files, state and claims; `--keep` keeps them and stops this note',
  };
}

/** Records `units` as kept: no longer named by `plan` and `run`. */
export async function keepStreams(store: ObjectStore, jobName: string, units: readonly string[]): Promise<void> {
  const kept = await readKeptStreams(store, jobName);
  for (const u of units) kept.add(u);
  await store.put(keptKey(jobName), JSON.stringify({ format: 1, streams: [...kept].sort() }), { contentType: 'application/json' });
}

export class RetireRefusedError extends UserInputError {
  override name = 'RetireRefusedError';
}

/** What a removal deleted. */
export interface Retired {
  streams: string[];
  files: number;
  state_objects: number;
  claims: number;
  /** A removal an earlier command began and did not finish, finished first. */
  resumed: boolean;
}

/** An Iceberg job's tables, for a removal to take the streams' rows out of them. */
export interface RetiringTables {
  /** Throws when a file to retire is in a table the job no longer writes (no commit would drop it). */
  check(files: readonly string[]): Promise<void>;
  /** Commits each table as the state's live files: once the streams' state is gone, a snapshot without their files. */
  commit(): Promise<void>;
}

export interface RetireOptions {
  /**
   * Iceberg: the tables are committed once the streams' state is deleted (their rows leave the
   * current snapshots), and their files stay for the older snapshots that name them, until
   * expire-snapshots and remove-orphan-files.
   */
  tables?: RetiringTables | undefined;
}

/**
 * Deletes `units` (streams the job no longer has) at the destination: their files, state and the
 * claims no stream of the job still needs. The caller holds the job's exclusive lease. Refused when
 * a file of theirs also holds another stream's rows (compaction merges a partition's files).
 */
export async function retireStreams(
  store: ObjectStore,
  job: Job,
  units: readonly string[],
  partitioning: string,
  opts: RetireOptions = {},
): Promise<Retired> {
  const earlier = await readJson<Retiring>(store, retiringKey(job.name));
  const resumed = earlier ? await finish(store, job.name, earlier, opts.tables) : null;
  const plan = await retiring(
    store,
    job,
    units.filter((u) => !earlier?.streams.includes(u)),
    partitioning,
    opts.tables,
  );
  const done = plan.streams.length > 0 ? await finish(store, job.name, plan, opts.tables) : { state: 0 };
  const kept = await readKeptStreams(store, job.name);
  if (units.some((u) => kept.has(u))) {
    const left = [...kept].filter((u) => !units.includes(u));
    await store.put(keptKey(job.name), JSON.stringify({ format: 1, streams: left }), { contentType: 'application/json' });
  }
  return {
    streams: [...(earlier?.streams ?? []), ...plan.streams],
    files: (earlier?.files.length ?? 0) + plan.files.length,
    state_objects: (resumed?.state ?? 0) + done.state,
    claims: (earlier?.claims.length ?? 0) + plan.claims.length,
    resumed: earlier !== null,
  };
}

/** What deleting `units` takes: their files (none shared with the job's other streams) and the claims only they need. */
async function retiring(
  store: ObjectStore,
  job: Job,
  units: readonly string[],
  partitioning: string,
  tables: RetiringTables | undefined,
): Promise<Retiring> {
  const state = new WindowState(store, job.name);
  const gone = new Set(units);
  const files = new Set<string>();
  const others = new Map<string, string>();
  for await (const rec of state.completedRecords()) {
    for (const f of rec.files) {
      if (gone.has(rec.unit_key)) files.add(f.key);
      else others.set(f.key, rec.unit_key);
    }
  }
  const shared = [...files].filter((k) => others.has(k));
  if (shared.length > 0)
    throw new RetireRefusedError(`${shared.length} file(s) of the streams to retire also hold rows of streams the job keeps`, {
      details: `${shared[0]} holds rows of ${others.get(shared[0]!)} too (compaction merged them)`,
      hint: 'Keep those streams instead (retire --keep), or export the kept streams of those partitions again with run --force after deleting the files by hand.',
    });
  const needed = new Set(jobStreams(job).map((s) => claimName(s, partitioning, job.name)));
  const claims = new Set<string>();
  for (const u of units) {
    const k = parseStreamKey(u);
    if (!k) continue;
    const name = claimName({ dataset: k.dataset, targetKey: k.target, chainId: k.chainId }, partitioning, job.name);
    if (!needed.has(name)) claims.add(`${OWNERS_ROOT}/${name}/${job.name}.json`);
  }
  await tables?.check([...files]);
  return { format: 1, streams: [...gone].sort(), files: tables ? [] : [...files].sort(), claims: [...claims].sort() };
}

/** Runs a recorded removal to its end: record, state, (Iceberg: the tables' commit), files, claims, record gone. */
async function finish(store: ObjectStore, jobName: string, r: Retiring, tables?: RetiringTables): Promise<{ state: number }> {
  await store.put(retiringKey(jobName), JSON.stringify(r), { contentType: 'application/json' });
  const root = `_state/${jobName}/`;
  const gone = new Set(r.streams);
  const stateKeys: string[] = [];
  for await (const o of store.list(root, { etags: false })) {
    const rest = o.key.slice(root.length);
    const folder = rest.slice(0, rest.indexOf('/'));
    if (!STREAM_FOLDERS.includes(folder)) continue;
    const place = rest.slice(folder.length + 1);
    const unit = place.endsWith('.json') ? streamOf(place) : null;
    if (unit !== null && gone.has(unit)) stateKeys.push(o.key);
  }
  await store.deleteMany(stateKeys);
  await tables?.commit();
  await store.deleteMany(r.files);
  await store.deleteMany(r.claims);
  await store.delete(retiringKey(jobName));
  return { state: stateKeys.length };
}

/** The stream key a state object under a stream folder belongs to (`<key>.json` or `<key>/<name>.json`). */
function streamOf(place: string): string | null {
  const asFile = place.slice(0, -'.json'.length);
  if (parseStreamKey(asFile)) return asFile;
  const dir = place.slice(0, place.lastIndexOf('/'));
  return parseStreamKey(dir) ? dir : null;
}
