export {
  planJob,
  windowKey,
  parseWindowKey,
  PlanError,
  type ChainHead,
  type Plan,
  type PlanOptions,
  type StreamCoverage,
  type StreamTarget,
  type PlannedWindow,
} from './plan.js';
export {
  axisOfStreamKey,
  formatStreamKey,
  isSnapshotStream,
  keyAcrossChains,
  parseStreamKey,
  shardOfStreamKey,
  type StreamKey,
} from './stream-key.js';
export { estimateRequests, estimateRun, pagesFor, type EstimateOptions, type RequestEstimate, type RunEstimate } from './estimate.js';
export { cutOnGrid, contains, countCutsOnGrid, gaps, intersect, length, merge, subtract, totalLength, type Interval } from './intervals.js';
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
export { addTallies, cellsOf, headServingAll, NO_WINDOWS, tallyWindows, windowCells, type WindowTally } from './window-tally.js';
