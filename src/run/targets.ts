import type { Abi } from 'viem';
import { UserInputError } from '../errors.js';
import { fieldPlace } from '../job/field-place.js';
import type { Job } from '../job/schema.js';
import type { InsightClient } from '../source/client.js';
import { HttpStatusError } from '../source/errors.js';
import { chainIdBatches } from '../source/query.js';
import type { TableShape, TargetOptions } from '../datasets/dataset.js';
import { DATASETS } from '../datasets/index.js';
import { chosenTable, type PlannedWindow } from '../plan/plan.js';
import { jobStreams } from '../plan/streams.js';

export class NameNotResolvedError extends UserInputError {
  override name = 'NameNotResolvedError';
}

/** Two wallet targets of a job are the same address once names are resolved. */
export class DuplicateTargetError extends UserInputError {
  override name = 'DuplicateTargetError';
}

/**
 * Resolves wallet names (alice.eth) to addresses once, before planning, so partitions and state
 * always use the address: through resolve, or, where resolve takes no names (the real indexer),
 * the address the wallets route answers for the name. Returns a job whose wallet targets all hold
 * lowercase addresses.
 */
export async function resolveWalletNames(job: Job, client: InsightClient): Promise<Job> {
  if (!job.targets.some((t) => t.kind === 'wallet' && t.isName)) return job;
  const targets = await Promise.all(
    job.targets.map(async (t) => {
      if (t.kind !== 'wallet' || !t.isName) return t;
      const address = await nameAddress(client, t.wallet, t.chains);
      if (!address.ok) {
        throw new NameNotResolvedError(`The name "${t.wallet}" does not resolve to an address`, {
          details: `${fieldPlace(job, `targets[${t.index}].wallet`)} (${address.why})`,
          hint: 'Write the wallet address instead, or check the name.',
          cause: address.cause,
        });
      }
      return { ...t, wallet: address.address, isName: false };
    }),
  );
  // The job file check refuses a wallet listed twice; a name and its address are only seen here.
  const seen = new Map<string, { index: number; label: string }>();
  job.targets.forEach((original, i) => {
    const t = targets[i]!;
    if (t.kind !== 'wallet' || original.kind !== 'wallet') return;
    const first = seen.get(t.wallet);
    if (first) {
      throw new DuplicateTargetError(`The wallet "${original.wallet}" is already targets[${first.index}] ("${first.label}")`, {
        details: `${fieldPlace(job, `targets[${t.index}].wallet`)} resolves to ${t.wallet}, as ${fieldPlace(job, `targets[${first.index}].wallet`)} does`,
        hint: 'List its datasets in one target.',
      });
    }
    seen.set(t.wallet, { index: t.index, label: original.wallet });
  });
  return { ...job, targets };
}

type NameAnswer = { ok: true; address: string } | { ok: false; why: string; cause?: unknown };

const ADDRESS = /^0x[0-9a-f]{40}$/;

/** The service answers 400 (or 404) for a name it cannot take: that is the job's mistake, or another route's turn. */
function refused(err: unknown): err is HttpStatusError {
  return err instanceof HttpStatusError && (err.status === 400 || err.status === 404);
}

/** A 404 from the wallets route, which every server of the interface has: the base URL is wrong, not the name. */
function refusedName(err: unknown): err is HttpStatusError {
  return err instanceof HttpStatusError && err.status === 400;
}

/**
 * The name's address on the target's chains, asked in request-sized batches (the run's chain ids
 * per request: InsightClient.chainIdsPerRequest): every batch must answer the same address.
 */
async function nameAddress(client: InsightClient, name: string, chainIds: number[]): Promise<NameAnswer> {
  let first: { address: string; chains: number[] } | undefined;
  for (const chains of chainIdBatches(chainIds, client.chainIdsPerRequest)) {
    const answer = (await resolveName(client, name, chains)) ?? (await walletRouteAddress(client, name, chains));
    if (!answer.ok) return answer;
    if (first && answer.address !== first.address) {
      return {
        ok: false,
        why: `it resolves to ${first.address} on chains ${first.chains.join(', ')} but to ${answer.address} on chains ${chains.join(', ')}`,
      };
    }
    first ??= { address: answer.address, chains };
  }
  return first ? { ok: true, address: first.address } : { ok: false, why: 'the target names no chain' };
}

/** The address resolve gives the name; undefined when resolve does not turn names into addresses (the real indexer's resolve takes none). */
async function resolveName(client: InsightClient, name: string, chainIds: number[]): Promise<NameAnswer | undefined> {
  try {
    const res = await client.resolve(name, { chainIds });
    const address = res.data.address?.toLowerCase();
    return address && ADDRESS.test(address) ? { ok: true, address } : undefined;
  } catch (err) {
    if (refused(err)) return undefined;
    throw err;
  }
}

/** The address the wallets route answers for the name (meta.address): the route itself takes names. */
async function walletRouteAddress(client: InsightClient, name: string, chainIds: number[]): Promise<NameAnswer> {
  try {
    const res = await client.walletTransactions(name, { chainIds, limit: 1, page: 0 });
    const address = res.meta.address?.toLowerCase();
    if (address && ADDRESS.test(address)) return { ok: true, address };
    return { ok: false, why: 'resolve gave no address, and the wallets route answered without meta.address' };
  } catch (err) {
    if (!refusedName(err)) throw err;
    return {
      ok: false,
      why: `resolve gave no address, and the wallets route answered HTTP ${err.status}${err.serverMessage ? `: ${err.serverMessage}` : ''}`,
      cause: err,
    };
  }
}

/**
 * Checks the job's options for every dataset of every target (what a run does before its first
 * request), throwing the dataset's UserInputError (e.g. AggregateExpressionError).
 */
export function checkDatasetOptions(job: Job): void {
  const factory = new TargetFactory(job);
  for (const spec of jobStreams(job)) DATASETS[spec.dataset].checkOptions?.(spec.target, factory.options(spec.filters));
}

/** Builds each unit's dataset target (with its decoders) through its dataset module, once per target and filters. */
export class TargetFactory {
  private readonly built = new Map<string, Promise<unknown>>();
  private readonly abis = new Map<string, Promise<Abi>>();

  constructor(private readonly job: Job) {}

  /** The target of a unit for its dataset. */
  forDataset(u: Pick<PlannedWindow, 'dataset' | 'target' | 'targetKey' | 'filters'>): Promise<unknown> {
    const key = `${u.dataset}:${u.targetKey}:${JSON.stringify(u.filters)}`;
    let target = this.built.get(key);
    if (!target) {
      target = (async (): Promise<unknown> => (await DATASETS[u.dataset].buildTarget(u.target, this.options(u.filters))) as unknown)();
      this.built.set(key, target);
    }
    return target;
  }

  /**
   * A unit's table (name and columns) without building its target where the dataset can say it
   * so (no decoder built: a run with nothing to export loads neither viem nor the decode modules).
   */
  async tableOf(u: Pick<PlannedWindow, 'dataset' | 'target' | 'targetKey' | 'filters'>): Promise<TableShape> {
    const ds = DATASETS[u.dataset];
    if (ds.tableOf) {
      const shape = await ds.tableOf(u.target, this.options(u.filters));
      return { name: chosenTable(u.dataset, u.target) ?? shape.name, columns: shape.columns };
    }
    const target = await this.forDataset(u);
    return { name: TargetFactory.tableName(u, target), columns: ds.columns(target) };
  }

  /** The table a unit's rows go to: the one the job file names for its dataset, else the dataset's default. */
  static tableName(u: Pick<PlannedWindow, 'dataset' | 'target'>, target: unknown): string {
    return chosenTable(u.dataset, u.target) ?? DATASETS[u.dataset].tableName(target);
  }

  /** What a dataset builds its target with besides the unit target. */
  options(filters: Record<string, string>): TargetOptions {
    return {
      jobFile: this.job.jobFile,
      decode: this.job.decode,
      aggregates: this.job.aggregates,
      filters,
      abi: (path) => this.abi(path),
    };
  }

  private abi(path: string): Promise<Abi> {
    let p = this.abis.get(path);
    if (!p) this.abis.set(path, (p = import('../decode/abi-file.js').then(({ loadAbiFile }) => loadAbiFile(path))));
    return p;
  }
}
