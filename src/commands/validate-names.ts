/**
 * `validate`'s one read of the service: a job naming a wallet (alice.eth) is refused by `run` when
 * the name resolves to nothing or to a wallet the job also lists by address, and only the service
 * can say which. `validate` asks it as `run` does (resolve requests, read-only) unless `--offline`,
 * which leaves a warning naming the names it did not check.
 */
import type { ResolvedConfig } from '../config/index.js';
import { fieldPosition } from '../job/field-place.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { openSource } from '../run/source-session.js';
import { resolveWalletNames } from '../run/targets.js';

export interface NameWarning {
  line: number;
  column: number;
  field: string;
  message: string;
}

/** The job's wallet names resolved as a run resolves them (throws what a run throws), or, offline, a warning per name. */
export async function checkWalletNames(job: Job, config: ResolvedConfig, logger: Logger, offline: boolean): Promise<NameWarning[]> {
  const named = job.targets.filter((t) => t.kind === 'wallet' && t.isName);
  if (named.length === 0) return [];
  // Without a service to ask (--offline, or no base URL: unsetForRun warns of that), each name is a warning.
  const why = offline ? '--offline' : !config.source.baseUrl ? 'no source.base_url' : null;
  if (why) {
    return named.map((t) => {
      const field = `targets[${t.index}].wallet`;
      const at = fieldPosition(job, field) ?? { line: 1, column: 1 };
      return {
        ...at,
        field,
        message: `not resolved (${why}): run refuses a name that resolves to no address or to a wallet the job also lists`,
      };
    });
  }
  const source = await openSource(config, logger);
  try {
    await resolveWalletNames(job, source.client);
  } finally {
    await source.close();
  }
  return [];
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
