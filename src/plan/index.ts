export {
  planJob,
  selectShard,
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
export { alignedPieces, contains, countAlignedPieces, gaps, intersect, merge, subtract, totalLength, type Interval } from './intervals.js';
