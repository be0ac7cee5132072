/**
 * The destination `plan` reads for a job that names none: empty, and refusing every write (a plan
 * writes nothing), so the plan is the one planRun makes for a first run.
 */
import { InsightExportError } from '../errors.js';
import type { ObjectStore } from '../store/store.js';

export function noDestination(): ObjectStore {
  const refuse = (): never => {
    throw new InsightExportError('A plan writes nothing', { details: 'a write reached the empty destination of a plan' });
  };
  return {
    location: '(no destination)',
    putFile: refuse,
    put: refuse,
    delete: refuse,
    deleteMany: refuse,
    get: () => Promise.resolve(null),
    getStream: () => Promise.resolve(null),
    head: () => Promise.resolve(null),
    list: async function* () {},
  };
}
