import { availableParallelism } from 'node:os';

/** How many workers a run starts for `--workers N`, and what it says when that is fewer. */
export interface WorkerCount {
  count: number;
  /** Set when N is above the machine's cores and the run starts one worker per core instead. */
  capped?: { requested: number; cores: number; message: string };
}

/**
 * At most one worker per core: a worker decodes and writes on its own core, and requests already
 * overlap inside each worker (requests_in_flight), so more workers than cores only compete.
 */
export function workerCount(requested: number, cores = availableParallelism()): WorkerCount {
  if (requested <= cores) return { count: requested };
  const message = `--workers ${requested} on ${cores} core${cores === 1 ? '' : 's'}: starting ${cores === 1 ? 'no workers (the run exports in this process)' : `${cores} workers, one per core`}; more would only compete for the cores`;
  return { count: cores, capped: { requested, cores, message } };
}
