/**
 * What the planner asks the service (a chain's head; whether a point is served), the same for every
 * command that plans a job: a run, `plan` and `verify`. Only the service's head says what is
 * served: windows past it minus the safety lag are pending in all three alike.
 */
import type { PlanOptions } from '../plan/index.js';
import { headFinder, type ChainChecks } from './chains.js';

export type ServiceBounds = Required<Pick<PlanOptions, 'latest' | 'serves'>>;

export function serviceBounds(chains: ChainChecks): ServiceBounds {
  return { latest: headFinder(chains), serves: (chainId, axis, point) => chains.serves(chainId, axis, point) };
}

/** The same, the checks (and the source under them) made only when the planner first asks: a complete fixed range asks nothing. */
export function lazyServiceBounds(open: () => Promise<ChainChecks>): ServiceBounds {
  let chains: Promise<ChainChecks> | null = null;
  const checks = () => (chains ??= open());
  return {
    latest: async (chainId) => serviceBounds(await checks()).latest(chainId),
    serves: async (chainId, axis, point) => (await checks()).serves(chainId, axis, point),
  };
}
