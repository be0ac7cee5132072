import type { Abi } from 'viem';
import { loadAbiFile } from '../decode/abi-file.js';
import { createEventDecoder } from '../decode/event-decoder.js';
import { parseEventSignature } from '../decode/signature.js';
import { createTransactionDecoder } from '../decode/transaction-decoder.js';
import { UserInputError } from '../errors.js';
import type { Job } from '../job/schema.js';
import type { InsightClient } from '../source/client.js';
import type { WalletTarget } from '../datasets/transactions.js';
import type { EventTarget } from '../datasets/events.js';
import type { UnitTarget } from '../plan/plan.js';

export class NameNotResolvedError extends UserInputError {
  override name = 'NameNotResolvedError';
}

/**
 * Resolves wallet names (alice.eth) to addresses once, before planning, so partitions and state
 * always use the address. Returns a job whose wallet targets all hold lowercase addresses.
 */
export async function resolveWalletNames(job: Job, client: InsightClient): Promise<Job> {
  if (!job.targets.some((t) => t.kind === 'wallet' && t.isName)) return job;
  const targets = await Promise.all(
    job.targets.map(async (t) => {
      if (t.kind !== 'wallet' || !t.isName) return t;
      const res = await client.resolve(t.wallet, { chainIds: t.chains });
      const address = res.data.address?.toLowerCase();
      if (!address || !/^0x[0-9a-f]{40}$/.test(address)) {
        throw new NameNotResolvedError(`The name "${t.wallet}" does not resolve to an address`, {
          details: `${job.jobFile} targets[${t.index}].wallet (resolve answered type "${res.data.type}")`,
          hint: 'Write the wallet address instead, or check the name.',
        });
      }
      return { ...t, wallet: address, isName: false };
    }),
  );
  return { ...job, targets };
}

/** Builds the dataset targets (with their decoders) for the planner's unit targets, once per target. */
export class TargetFactory {
  private readonly cache = new Map<string, WalletTarget | EventTarget>();
  private readonly abis = new Map<string, Promise<Abi>>();

  constructor(private readonly job: Job) {}

  async forUnit(t: UnitTarget): Promise<WalletTarget | EventTarget> {
    const key = t.kind === 'wallet' ? `w:${t.wallet}` : `c:${t.contract}:${t.event.topic0}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const built = t.kind === 'wallet' ? this.wallet(t) : await this.event(t);
    this.cache.set(key, built);
    return built;
  }

  private wallet(t: Extract<UnitTarget, { kind: 'wallet' }>): WalletTarget {
    return {
      kind: 'wallet',
      address: t.wallet,
      label: t.wallet,
      decode: this.job.decode,
      decoder: this.job.decode ? createTransactionDecoder({}) : undefined,
    };
  }

  private async event(t: Extract<UnitTarget, { kind: 'contract' }>): Promise<EventTarget> {
    const abi = t.abi ? await this.abi(t.abi) : undefined;
    const signature = parseEventSignature(t.event.signature);
    return {
      kind: 'contract',
      address: t.contract.toLowerCase(),
      signature,
      decode: this.job.decode,
      decoder: createEventDecoder(signature, { abi, preferService: this.job.decode }),
    };
  }

  private abi(path: string): Promise<Abi> {
    let p = this.abis.get(path);
    if (!p) this.abis.set(path, (p = loadAbiFile(path)));
    return p;
  }
}
