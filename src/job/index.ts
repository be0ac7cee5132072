export { loadJob, parseJob, type ParseJobOptions } from './load.js';
export { JobFileError } from './errors.js';
export { FileProblemsError, formatProblem, type FileProblem } from '../yaml-file/problems.js';
export {
  jobDatasets,
  JobFileSchema,
  jobJsonSchema,
  type Axis,
  type ContractTarget,
  type Job,
  type JobFileInput,
  type JobRange,
  type NftType,
  type Target,
  type WalletTarget,
} from './schema.js';
export { DEFAULT_PARTITIONING, PARTITION_PLACEHOLDERS, renderPartition, type PartitionValues } from '../sink/partitioning.js';
export type { Destination, EventSignature } from '../settings/values.js';
