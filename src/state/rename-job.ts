/**
 * A job renamed with its state: `_state/<from>/` becomes `_state/<to>/` and the partition claims of
 * <from> become <to>'s (src/state/owners.ts). The data files stay where they are: their keys do not
 * name the job (a partitioning with `{job}` does, and is refused: its files would have to move).
 *
 * The caller holds both names' exclusive leases. The steps, each repeatable, in an order where an
 * interruption leaves one name whole and the command, given again, finishes:
 *
 *   1. `_state/<to>/renamed-from.json` {from, step: "copying"}: <to>'s state is a copy in progress;
 *   2. every object of `_state/<from>/` but its lease entries copied to `_state/<to>/` (<from> is
 *      whole; a run of <to> meanwhile is refused, as <from> still claims its partitions);
 *   3. the record's step becomes "copied" (from here on <to>'s copy is whole);
 *   4. <to>'s claims written, then <from>'s removed (a run of <from> is refused from here on);
 *   5. `_state/<from>/` removed but its lease entries (released by the caller), record "done".
 */
import { UserInputError } from '../errors.js';
import { partitioningUses } from '../sink/partitioning.js';
import type { ObjectStore } from '../store/store.js';
import { claimsOf } from './owners.js';

/** What a rename moved. */
export interface RenameResult {
  from: string;
  to: string;
  /** State objects copied to `_state/<to>/` (0 when an interrupted rename had copied them already). */
  state_objects: number;
  claims: number;
  /** An earlier rename of the same names was interrupted, and this one finished it. */
  resumed: boolean;
}

interface RenameRecord {
  from: string;
  step: 'copying' | 'copied' | 'done';
}

export class RenameRefusedError extends UserInputError {
  override name = 'RenameRefusedError';
}

/** The state folders that hold a job's windows (see src/state/window-state.ts). */
const WINDOW_FOLDERS = ['units', 'segments', 'completed', 'pending'];
const JOB_NAME = /^[a-z0-9][a-z0-9_-]*$/;
const isLeaseEntry = (key: string, root: string) => /^lease(-shard-\d+-of-\d+)?\.json$/.test(key.slice(root.length + 1));
const recordKey = (job: string) => `_state/${job}/renamed-from.json`;

async function stateKeys(store: ObjectStore, job: string): Promise<string[]> {
  const root = `_state/${job}`;
  const keys: string[] = [];
  for await (const o of store.list(`${root}/`, { etags: false })) if (!isLeaseEntry(o.key, root)) keys.push(o.key);
  return keys;
}

async function readRecord(store: ObjectStore, job: string): Promise<RenameRecord | null> {
  const got = await store.get(recordKey(job));
  return got ? (JSON.parse(got.body.toString('utf8')) as RenameRecord) : null;
}

const writeRecord = (store: ObjectStore, to: string, record: RenameRecord) =>
  store.put(recordKey(to), JSON.stringify(record), { contentType: 'application/json' });

function refuse(message: string, details: string, hint: string): never {
  throw new RenameRefusedError(message, { details, hint });
}

/** A state object's body under the new name: a manifest names its segments by their keys under `_state/<job>/`. */
function movedBody(key: string, body: Buffer, from: string, to: string): Buffer {
  if (!key.endsWith('.json')) return body;
  return Buffer.from(body.toString('utf8').replaceAll(`"_state/${from}/`, `"_state/${to}/`), 'utf8');
}

/** Checks the names and what `_state/<to>/` holds; returns the interrupted rename's record when there is one. */
async function checkRename(store: ObjectStore, from: string, to: string, partitioning: string): Promise<RenameRecord | null> {
  for (const name of [from, to])
    if (!JOB_NAME.test(name))
      refuse(`"${name}" is not a job name`, 'job names: [a-z0-9][a-z0-9_-]*', 'Give the names as the job files write them.');
  if (from === to) refuse(`The job is already named ${to}`, `--old-name ${from}`, 'Give the old name with --old-name.');
  if (partitioningUses(partitioning, 'job'))
    refuse(
      `Job ${from}'s files are in folders named after the job: a rename would have to move them`,
      `output.partitioning: ${partitioning}`,
      `Keep the name ${from} in the job file, or export the renamed job again (its files go to job=${to}/) and remove job ${from}'s folders.`,
    );
  const record = await readRecord(store, to);
  if (record && record.from === from) return record;
  // A run of <to> refused before the rename (the partitions were <from>'s) may have left its report: no windows, no claims.
  const theirs = (await stateKeys(store, to)).filter((k) => WINDOW_FOLDERS.some((f) => k.startsWith(`_state/${to}/${f}/`)));
  theirs.push(...(await claimsOf(store, to)));
  if (theirs.length > 0)
    refuse(
      `Job ${to} already has exported windows or claims at ${store.location}`,
      `${theirs.length} object(s), e.g. ${theirs[0]}`,
      `Pick a name no job has exported under at this destination, or retire job ${to}'s windows first.`,
    );
  if ((await stateKeys(store, from)).length === 0)
    refuse(
      `Job ${from} has no state at ${store.location}`,
      `_state/${from}/ is empty`,
      'Check the old name (as its job file wrote it) and the destination.',
    );
  return null;
}

/** Renames job `from` to `to` at the destination (see the steps above). The caller holds both exclusive leases. */
export async function renameJob(store: ObjectStore, from: string, to: string, partitioning: string): Promise<RenameResult> {
  const record = await checkRename(store, from, to, partitioning);
  let copied = 0;
  if (!record || record.step === 'copying') {
    await writeRecord(store, to, { from, step: 'copying' });
    for (const key of await stateKeys(store, from)) {
      const got = await store.get(key);
      if (!got) continue;
      await store.put(`_state/${to}/${key.slice(`_state/${from}/`.length)}`, movedBody(key, got.body, from, to), {
        contentType: 'application/json',
      });
      copied++;
    }
    await writeRecord(store, to, { from, step: 'copied' });
  }
  const fromClaims = await claimsOf(store, from);
  for (const key of fromClaims) {
    const got = await store.get(key);
    if (!got) continue;
    const subject = JSON.parse(got.body.toString('utf8')) as Record<string, unknown>;
    const toKey = `${key.slice(0, key.lastIndexOf('/'))}/${to}.json`;
    await store.put(toKey, JSON.stringify({ ...subject, job: to }), { contentType: 'application/json' });
  }
  await store.deleteMany(fromClaims);
  await store.deleteMany(await stateKeys(store, from));
  await writeRecord(store, to, { from, step: 'done' });
  const claims = (await claimsOf(store, to)).length;
  return { from, to, state_objects: copied, claims, resumed: record !== null };
}
