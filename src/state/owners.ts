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
import { partitioningUses } from '../sink/partitioning.js';
import type { ObjectStore } from '../store/store.js';

export const OWNERS_ROOT = '_state/_owners';

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
      hint: 'Use another destination prefix for this job (or add {job} to output.partitioning); if that job is retired, delete its files, _state/<job>/ and its claims under _state/_owners/.',
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
 * `checkOnly` (a dry run: refuses as a claim would, claims nothing).
 */
export async function claimPartitions(
  store: ObjectStore,
  jobName: string,
  partitioning: string,
  subjects: ClaimSubject[],
  opts: { checkOnly?: boolean } = {},
): Promise<void> {
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
  if (missing.length === 0 || opts.checkOnly) return;
  const body = (name: string) => JSON.stringify({ job: jobName, ...wanted.get(name)!, partitioning });
  await Promise.all(
    missing.map((name) => store.put(`${OWNERS_ROOT}/${name}/${jobName}.json`, body(name), { contentType: 'application/json' })),
  );
  // Another job may have claimed the same partitions meanwhile: then both step back.
  try {
    refuse(await listClaims(store));
  } catch (err) {
    await store.deleteMany(missing.map((name) => `${OWNERS_ROOT}/${name}/${jobName}.json`));
    throw err;
  }
}
