import { availableParallelism } from 'node:os';

/** How many workers a run starts for `--workers N`, and what it says when N is above the machine's cores. */
export interface WorkerCount {
  count: number;
  /** Set when N is above the machine's cores: the run starts N and warns. */
  aboveCores?: { requested: number; cores: number; message: string };
}

/**
 * N workers as asked, with a warning above the machine's cores: a worker decodes and writes on its
 * own core, and requests already overlap inside each worker (requests_in_flight), so workers beyond
 * the cores compete for them. Not capped: a run waiting on a slow service may still gain from them.
 */
export function workerCount(requested: number, cores = availableParallelism()): WorkerCount {
  if (requested <= cores) return { count: requested };
  const message = `--workers ${requested} on ${cores} core${cores === 1 ? '' : 's'}: workers beyond the cores compete for them (requests_in_flight already overlaps requests inside each worker)`;
  return { count: requested, aboveCores: { requested, cores, message } };
}
