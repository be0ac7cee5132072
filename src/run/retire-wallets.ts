/**
 * The job with its wallet names resolved to addresses (state and files are named by address), the
 * source opened only when a target names a wallet by name: `retire`, `remove-orphan-files` and the
 * commit after `run --workers` need no source otherwise (a job file may leave source.base_url to a flag of run).
 */
import { ConfigError, type ResolvedConfig } from '../config/index.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { openSource } from './source-session.js';
import { resolveWalletNames } from './targets.js';

export async function withWalletAddresses(job: Job, config: ResolvedConfig, logger: Logger, command: string): Promise<Job> {
  const names = job.targets.flatMap((t) => (t.kind === 'wallet' && t.isName ? [t.wallet] : []));
  if (names.length === 0) return job;
  if (!config.source.baseUrl && !config.source.sandbox)
    throw new ConfigError(`${command} needs source.base_url to resolve the wallet name(s) ${names.join(', ')}`, {
      details: `job ${job.name}: its state and files are named by address; nothing was changed`,
      hint: 'Set source.base_url in the job (or "sandbox"), INSIGHT_BASE_URL, or --base-url; or write the wallet addresses.',
    });
  const source = await openSource(config, logger);
  try {
    return await resolveWalletNames(job, source.client);
  } finally {
    await source.close();
  }
}
