/**
 * A service that takes fewer chain ids per request than the contract's 55 (`maxChainIdsPerRequest`):
 * the hosted service's own client documents at most 50 (and 5 for the deprecated `chain`). A request
 * of a list operation (wallet transactions, contract events) or resolve (its `chain_id` is the same
 * common parameter) naming more is refused with a 400 saying so, as the contract's own limit is.
 */
import { badRequest, SandboxOptionsError } from './errors.js';
import type { SandboxOptions } from './options.js';
import { MAX_CHAIN_IDS, parseChainIds } from './query.js';

/** Throws the 400 when the request names more chain ids than the sandbox takes. */
export function refuseTooManyChains(opts: SandboxOptions, params: URLSearchParams): void {
  const most = opts.maxChainIdsPerRequest;
  if (most === undefined) return;
  const ids = parseChainIds(params);
  if (ids && ids.length > most) throw badRequest(`too many chain ids: ${ids.length} (at most ${most})`);
}

/** maxChainIdsPerRequest, when given, is a whole number in 1..55. */
export function validateChainLimit(opts: SandboxOptions): void {
  const most = opts.maxChainIdsPerRequest;
  if (most === undefined || (Number.isInteger(most) && most >= 1 && most <= MAX_CHAIN_IDS)) return;
  throw new SandboxOptionsError(`invalid maxChainIdsPerRequest ${most}`, { hint: `an integer in 1..${MAX_CHAIN_IDS}` });
}
