export {
  planJob,
  windowKey,
  parseWindowKey,
  PlanError,
  type ChainHead,
  type Plan,
  type PlanOptions,
  type UnitCoverage,
  type UnitTarget,
  type WorkUnit,
} from './plan.js';
export { axisOfUnitKey, formatUnitKey, isSnapshotUnit, keyAcrossChains, parseUnitKey, shardOfUnitKey, type UnitKey } from './unit-key.js';
export { estimateRequests, estimateRun, pagesFor, type EstimateOptions, type RequestEstimate, type RunEstimate } from './estimate.js';
export {
  alignedPieces,
  contains,
  countAlignedPieces,
  gaps,
  intersect,
  length,
  merge,
  subtract,
  totalLength,
  type Interval,
} from './intervals.js';
export {
  divideWindows,
  emptySplit,
  leadShardOf,
  ownerOf,
  selectShard,
  shardLoads,
  shardOwnsWindow,
  uncoveredSpans,
  withSpans,
  type ExpectedRows,
  type PlannedWindows,
  type ShardLoad,
  type ShardSplit,
  type SplitPart,
  type SplitSpan,
} from './shard-split.js';
