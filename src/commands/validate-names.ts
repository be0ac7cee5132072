/**
 * `validate`'s one read of the service, what only the service can say and `run` refuses: a wallet
 * name (alice.eth) that resolves to nothing or to a wallet the job also lists by address; a chain
 * the service does not serve (ChainNotServedError), a contract it does not know on a chain
 * (ContractNotFoundError), a range before its blocks (RangeBeforeServedBlocksError). `validate`
 * asks as `run` does (read-only: resolve requests, about one per chain and one per contract and
 * chain) unless `--offline`, which leaves a warning naming what it did not check.
 */
import type { ResolvedConfig } from '../config/index.js';
import { isSnapshot } from '../datasets/index.js';
import { fieldPosition } from '../job/field-place.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { jobStreams } from '../plan/streams.js';
import { ChainChecks } from '../run/chains.js';
import { contractsOf } from '../run/read-state.js';
import { openSource } from '../run/source-session.js';
import { resolveWalletNames } from '../run/targets.js';

export interface NameWarning {
  line: number;
  column: number;
  field: string;
  message: string;
}

/**
 * The job's wallet names resolved, its chains and contracts checked, as a run does (throws what a
 * run throws), or, offline, a warning per name and one for the chains and contracts.
 */
export async function checkAtService(job: Job, config: ResolvedConfig, logger: Logger, offline: boolean): Promise<NameWarning[]> {
  const named = job.targets.filter((t) => t.kind === 'wallet' && t.isName);
  // Snapshots (NFT holdings) ask no block route: a run checks the chains and contracts of its other streams.
  const streams = jobStreams(job).filter((s) => !isSnapshot(s.dataset));
  if (named.length === 0 && streams.length === 0) return [];
  // Without a service to ask (--offline, or no base URL: unsetForRun warns of that), each is a warning.
  const why = offline ? '--offline' : !config.source.baseUrl ? 'no source.base_url' : null;
  if (why) {
    const warnings = named.map((t) => {
      const field = `targets[${t.index}].wallet`;
      return warning(job, field, `not resolved (${why}): run refuses a name that resolves to no address or to a wallet the job also lists`);
    });
    if (offline && streams.length > 0)
      warnings.push(
        warning(
          job,
          'source.chains',
          'not checked (--offline): run refuses a chain the service does not serve, a contract it does not know on a chain, and a range before its blocks',
        ),
      );
    return warnings;
  }
  const source = await openSource(config, logger);
  try {
    const resolved = await resolveWalletNames(job, source.client);
    const chains = new ChainChecks(resolved, source.client, {}, logger);
    await chains.checkContracts(contractsOf(jobStreams(resolved).filter((s) => !isSnapshot(s.dataset))));
    await chains.checkServed(streams.map((s) => s.chainId));
  } finally {
    await source.close();
  }
  return [];
}

function warning(job: Job, field: string, message: string): NameWarning {
  return { ...(fieldPosition(job, field) ?? { line: 1, column: 1 }), field, message };
}

/**
 * Settings a run needs that neither the job, the environment, the config file nor validate's flags
 * set: not an error (a scheduler may give them as flags to `run` only), but `run` refuses without them.
 */
export function unsetForRun(config: ResolvedConfig): NameWarning[] {
  const unset: NameWarning[] = [];
  if (!config.output.destination)
    unset.push({
      line: 1,
      column: 1,
      field: 'output.destination',
      message: 'is not set: run refuses the job unless --destination or INSIGHT_EXPORT_DESTINATION gives it',
    });
  if (!config.source.baseUrl)
    unset.push({
      line: 1,
      column: 1,
      field: 'source.base_url',
      message: 'is not set: run refuses the job unless --base-url or INSIGHT_BASE_URL gives it ("sandbox" for the built-in one)',
    });
  return unset;
}
