/**
 * Which job owns which rows at a destination. Two jobs exporting the same dataset of the same
 * target on the same chain write files with the same names into the same folders: their rows
 * would be there twice and each job's `verify` would find the other's files. So the first job to
 * run claims those partitions, and another job is refused them.
 *
 * Layout: `_state/_owners/<claim>/<job>.json` (job names start with a letter or digit, so no job's
 * state is named `_owners`). `<claim>` is a hash of dataset x target x chain (and of the job name
 * when the partitioning template has `{job}`: each job then writes its own folders). A run checks
 * its claims with one listing, writes the missing ones, and lists again: of two jobs claiming the
 * same partitions at the same moment, both see each other, both withdraw and both are refused.
 */
import { createHash } from 'node:crypto';
import { UserInputError } from '../errors.js';
import { DEFAULT_PARTITIONING, partitioningUses } from '../sink/partitioning.js';
import type { ObjectStore } from '../store/store.js';
import { WindowState } from './window-state.js';

export const OWNERS_ROOT = '_state/_owners';

/** The default layout with a Hive partition per job: what the ownership hint offers (`ddl` reads it). */
export const JOB_PARTITIONING = DEFAULT_PARTITIONING.replace('{dataset}/', '{dataset}/job={job}/');

/** What a claim covers: the unit key without its filter variant and axis (the files share those). */
export interface ClaimSubject {
  dataset: string;
  targetKey: string;
  chainId: number;
}

export function claimName(subject: ClaimSubject, partitioning: string, jobName: string): string {
  const who = partitioningUses(partitioning, 'job') ? jobName : '';
  return createHash('sha256')
    .update(JSON.stringify([subject.dataset, subject.targetKey, subject.chainId, who]))
    .digest('hex')
    .slice(0, 24);
}

export class DestinationOwnedError extends UserInputError {
  override name = 'DestinationOwnedError';
  constructor(location: string, others: string[], partitions: string[]) {
    const shown = partitions.slice(0, 5).join('; ') + (partitions.length > 5 ? `; and ${partitions.length - 5} more` : '');
    super(`Another job already exports these partitions at ${location}: ${others.join(', ')}`, {
      details: `partitions owned by ${others.join(', ')}: ${shown}`,
      hint: `Use another destination prefix for this job, or give each job its own folders: output.partitioning "${JOB_PARTITIONING}" (a job=<name> partition warehouses read). If ${others.length === 1 ? `${others[0]} is` : 'those jobs are'} retired or renamed and exported nothing here, release ${others.length === 1 ? 'its' : 'their'} claims: insight-export release <this job file> --name ${others[0]}.`,
    });
  }
}

/** Claimed names -> the jobs holding them, from one listing. */
async function listClaims(store: ObjectStore): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for await (const obj of store.list(`${OWNERS_ROOT}/`)) {
    const [claim, file] = obj.key.slice(OWNERS_ROOT.length + 1).split('/');
    if (!claim || !file?.endsWith('.json')) continue;
    let list = out.get(claim);
    if (!list) out.set(claim, (list = []));
    list.push(file.slice(0, -'.json'.length));
  }
  return out;
}

/**
 * Claims the partitions of the job's units for it, or throws DestinationOwnedError naming the
 * other job(s) and the partitions. Writes nothing when another job owns any of them, nor with
 * `checkOnly` (refuses as a claim would, claims nothing: a dry run, and a run before it is sure to
 * write). Returns the keys of the claims it wrote (none when the job held them all already), for
 * the run to withdraw them when it ends without writing anything (releaseClaims).
 */
export async function claimPartitions(
  store: ObjectStore,
  jobName: string,
  partitioning: string,
  subjects: readonly ClaimSubject[],
  opts: { checkOnly?: boolean } = {},
): Promise<string[]> {
  const wanted = new Map<string, ClaimSubject>();
  for (const { dataset, targetKey, chainId } of subjects)
    wanted.set(claimName({ dataset, targetKey, chainId }, partitioning, jobName), { dataset, targetKey, chainId });
  const describe = (s: ClaimSubject) => `${s.dataset} of ${s.targetKey} on chain ${s.chainId}`;
  const refuse = (claims: Map<string, string[]>) => {
    const others = new Set<string>();
    const partitions: string[] = [];
    for (const [name, s] of wanted) {
      const theirs = (claims.get(name) ?? []).filter((job) => job !== jobName);
      if (theirs.length === 0) continue;
      theirs.forEach((j) => others.add(j));
      partitions.push(describe(s));
    }
    if (others.size > 0) throw new DestinationOwnedError(store.location, [...others].sort(), partitions);
  };
  const before = await listClaims(store);
  refuse(before);
  const missing = [...wanted.keys()].filter((name) => !(before.get(name) ?? []).includes(jobName));
  if (missing.length === 0 || opts.checkOnly) return [];
  const body = (name: string) => JSON.stringify({ job: jobName, ...wanted.get(name)!, partitioning });
  const keys = missing.map((name) => claimKey(name, jobName));
  await Promise.all(missing.map((name) => store.put(claimKey(name, jobName), body(name), { contentType: 'application/json' })));
  // Another job may have claimed the same partitions meanwhile: then both step back.
  try {
    refuse(await listClaims(store));
  } catch (err) {
    await store.deleteMany(keys);
    throw err;
  }
  return keys;
}

const claimKey = (name: string, jobName: string) => `${OWNERS_ROOT}/${name}/${jobName}.json`;

/** The keys of every claim a job holds at the destination. */
export async function claimsOf(store: ObjectStore, jobName: string): Promise<string[]> {
  const keys: string[] = [];
  for (const [name, jobs] of await listClaims(store)) if (jobs.includes(jobName)) keys.push(claimKey(name, jobName));
  return keys.sort();
}

/** A job asked to release its claims still has windows exported at the destination. */
export class ClaimsInUseError extends UserInputError {
  override name = 'ClaimsInUseError';
}

/**
 * Removes every claim `jobName` holds at the destination and returns their keys. Refused while the
 * job has exported windows there (its files would then be another job's to write again: rows
 * twice), unless `force`.
 */
export async function releaseClaims(store: ObjectStore, jobName: string, opts: { force?: boolean } = {}): Promise<string[]> {
  if (!opts.force) {
    if (await new WindowState(store, jobName).hasCompleted()) {
      throw new ClaimsInUseError(`Job ${jobName} has exported windows at ${store.location}: its claims stay`, {
        details: `_state/${jobName}/ records completed windows`,
        hint: `Another job taking these partitions would write the same rows again. Delete job ${jobName}'s files and _state/${jobName}/ first, or give --force if those rows are to be exported twice.`,
      });
    }
  }
  const keys = await claimsOf(store, jobName);
  if (keys.length > 0) await store.deleteMany(keys);
  return keys;
}
