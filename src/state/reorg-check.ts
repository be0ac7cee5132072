/**
 * Reorganisations found and repaired at the start of every run. Each completed block window
 * records the hash of the chain's block at its upper edge (WindowRecord.edge), read before its
 * rows; a block's hash commits to every block below it, so when the service now has another hash
 * at that number, some block at or below the edge was replaced since the window was read.
 *
 * A matching edge proves its own window, but not the windows below it: those were read at other
 * times, and a reorganisation between two commits (a run exporting while the chain reorganises)
 * leaves stale windows under newer windows of the new branch. What proves a window is its own
 * edge asked again; or, for windows one earlier check found still the chain's (that check saw one
 * chain), the newest of their edges asked again. So each check records, per unit, the windows it
 * found still the chain's (`checked/<unitKey>.json`, each window named by its marker's ETag: a
 * window exported again since is not among them), and the next check asks (`resolve/<number>`,
 * cached per block, so units of a chain sharing their edges share the requests):
 * - the edge of every window committed since (not in the record) within the horizon of the newest
 *   edge; below the horizon, windows are final;
 * - the newest recorded window's edge: when it matches, every recorded window (and every window
 *   older than the record) is still the chain's; when it changed, the recorded windows are asked
 *   one by one, newest first, until one matches.
 * On a quiet chain that is one request per chain when nothing was committed since the last check,
 * two when the last run committed one window, and one more per further window within the horizon.
 * Answers of a replica behind or of a cache are not taken for a reorganisation, nor for a match
 * once one is found (src/state/reorg-answers.ts).
 * Every window whose edge changed is exported again through the replacement protocol
 * (WindowState). A changed edge more than the horizon below the newest exported block is not
 * repaired: the run fails (exit 2: running again cannot help) naming the rewind that covers the
 * fork, found by bisecting the older windows' edges (`--rewind`).
 *
 * The fork is then placed within the lowest changed window of each chain: the rows exported there
 * carry the hashes of their blocks, and since a replaced block replaces every block above it,
 * bisecting those blocks (one request each, ~log2 of the window's blocks) finds the lowest block
 * whose rows were replaced and the highest whose rows were not. The depth is exact when the two
 * are adjacent; otherwise the blocks between held none of the job's rows.
 */
import pLimit from 'p-limit';
import { ExitCode, InsightExportError } from '../errors.js';
import type { Logger } from '../log.js';
import { windowKey, type Interval } from '../plan/index.js';
import { isSnapshotStream, parseStreamKey } from '../plan/stream-key.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { BlockEdge, WindowState } from './window-state.js';
import { stillTheChain, type Checked } from './reorg-records.js';
import { readBlockHashes } from './exported-files.js';
import { askEdge, oldBranchAnswers } from './reorg-answers.js';

export type { Checked } from './reorg-records.js';
export { DEFAULT_REORG_HORIZON, DEFAULT_REORG_HORIZONS, reorgHorizon } from './reorg-horizon.js';

/** A reorganisation found under one unit's windows. */
export interface ReorgFound {
  unit_key: string;
  chain_id: number;
  /**
   * The newest block known unchanged (a recorded edge, or a block of the chain's exported rows): the
   * fork is above it (null: none within reach matched).
   */
  fork_after_block: number | null;
  /** The lowest block known replaced (a recorded edge, or a block of the chain's exported rows). */
  first_changed_block: number;
  /** The newest exported block of the unit (the newest window's edge). */
  newest_block: number;
  /** Blocks known replaced: first_changed_block to newest_block. */
  depth: number;
  /** Blocks that may have been replaced: fork_after_block + 1 to newest_block. */
  depth_at_most: number;
  /** depth is the reorganisation's depth: no block lies between fork_after_block and first_changed_block. */
  depth_exact: boolean;
  /** Recorded edges whose block changed. */
  changed_edges: { block_number: number; recorded_hash: string; service_hash: string | null }[];
  /** The completed windows exported again. */
  windows: Interval[];
}

/** A reorganisation reaching below the horizon: not repaired on its own, and no later run repairs it without --rewind. */
export class ReorgBeyondHorizonError extends InsightExportError {
  override name = 'ReorgBeyondHorizonError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
}

export interface ReorgCheckInput {
  state: WindowState;
  /** Completed intervals per unit key; the result leaves out the windows to export again. */
  completed: ReadonlyMap<string, Interval[]>;
  /**
   * The newest completed end of each unit before --rewind took windows out (what --rewind counts
   * from), so a rewind the error names covers the fork even when a rewind was given already.
   */
  frontier?: (unitKey: string) => number | undefined;
  owns: (unitKey: string) => boolean;
  blocks: BlockLookup;
  horizon: (chainId: number) => number;
  logger: Logger;
}

export interface ReorgCheckResult {
  completed: Map<string, Interval[]>;
  reorgs: ReorgFound[];
  /** Per unit, what the check found still the chain's, when it differs from what was recorded (for WindowState.writeChecked). */
  checked: Map<string, Checked>;
}

function describeWindow(w: Interval, axis: string): string {
  if (axis !== 'time') return `[${w.start}, ${w.end})`;
  const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
  return `[${iso(w.start)}, ${iso(w.end)})`;
}

/** Units checked at once: their state reads overlap; their requests share the block cache and the client's limits. */
const UNITS_AT_ONCE = 16;

interface TooDeep {
  text: string;
  rewind: { amount: number; text: string };
}

export async function checkReorgs(input: ReorgCheckInput): Promise<ReorgCheckResult> {
  const out = new Map(input.completed);
  const reorgs: ReorgFound[] = [];
  const tooDeep: TooDeep[] = [];
  const searches: ForkSearch[] = [];
  const checked = new Map<string, Checked>();
  const mine = [...input.completed].filter(([unitKey, intervals]) => {
    const unit = parseStreamKey(unitKey);
    return unit !== null && !isSnapshotStream(unit) && input.owns(unitKey) && intervals.length > 0;
  });
  const limit = pLimit(UNITS_AT_ONCE);
  const units = await Promise.all(
    mine.map(([unitKey, intervals]) => {
      const { chainId, axis } = parseStreamKey(unitKey)!;
      return limit(() => checkStream(input, unitKey, chainId, axis, intervals));
    }),
  );
  mine.forEach(([unitKey, intervals], i) => {
    const unit = units[i]!;
    if (unit.tooDeep) tooDeep.push(unit.tooDeep);
    if (unit.checked) checked.set(unitKey, unit.checked);
    if (!unit.search) return;
    searches.push(unit.search);
    const again = unit.search.found.windows;
    out.set(
      unitKey,
      intervals.filter((iv) => !again.some((a) => a.start === iv.start && a.end === iv.end)),
    );
  });
  if (tooDeep.length > 0) {
    const widest = tooDeep.reduce((a, t) => (t.rewind.amount > a.amount ? t.rewind : a), tooDeep[0]!.rewind);
    throw new ReorgBeyondHorizonError('A chain reorganisation reaches deeper than the reorg horizon: nothing was exported', {
      metaMessages: tooDeep.map((t) => t.text),
      hint: `Export the windows again with --rewind ${widest.text} or more (it reaches below the fork), or raise range.reorg_horizon; then check with verify --chain-hashes.`,
    });
  }
  for (const chainId of new Set(searches.map((x) => x.found.chain_id))) {
    const ofChain = searches.filter((x) => x.found.chain_id === chainId);
    const fork = await placeFork(input, chainId, ofChain);
    for (const { found } of ofChain) {
      found.fork_after_block = fork.after;
      found.first_changed_block = fork.firstChanged;
      found.depth = found.newest_block - fork.firstChanged + 1;
      found.depth_at_most = fork.after === null ? found.depth : found.newest_block - fork.after;
      found.depth_exact = fork.after !== null && fork.firstChanged === fork.after + 1;
      reorgs.push(found);
      input.logger.warn(
        {
          chain: chainId,
          unit: found.unit_key,
          fork_after_block: found.fork_after_block,
          first_changed_block: found.first_changed_block,
          depth: found.depth,
          depth_exact: found.depth_exact,
          windows: found.windows.length,
        },
        'reorganisation found: exporting the replaced windows again',
      );
    }
  }
  return { completed: out, reorgs, checked };
}

interface StreamCheck {
  search?: ForkSearch;
  tooDeep?: TooDeep;
  /** What to record as still the chain's (absent: unchanged). */
  checked?: Checked;
}

/** One unit's windows against the chain (see the file comment). */
async function checkStream(
  input: ReorgCheckInput,
  unitKey: string,
  chainId: number,
  axis: string,
  intervals: Interval[],
): Promise<StreamCheck> {
  const { state, blocks } = input;
  const horizon = input.horizon(chainId);
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const { last, recorded, lowestRecorded, commitOf, edgeOf } = await lastCheck(state, unitKey);
  let floor = last?.floor;

  let newest: number | null = null;
  let below = false;
  /** A recorded window's edge matched: every window recorded (or older than the record) is still the chain's. */
  let proven = false;
  /** The last edge asked changed: windows below are asked until one matches. */
  let walking = false;
  const matched: { w: Interval; edge: BlockEdge }[] = [];
  const changed: ReorgFound['changed_edges'] = [];
  const again: Interval[] = [];
  let lowestChangedFiles: string[] = [];
  let tooDeep: TooDeep | undefined;
  // Below the horizon, a window not recorded is final unless a walk reaches it; the loop ends once
  // no recorded window below is left to prove.
  const pastTheEnd = (w: Interval) => proven || !(lowestRecorded < w.start);
  for (let i = sorted.length - 1; i >= 0; i--) {
    const w = sorted[i]!;
    const record = recorded.get(windowKey(w));
    if (record && proven) {
      if (walking) matched.push({ w, edge: record.edge });
      walking = false;
      below = newest! - record.edge.block_number > horizon;
      if (below && (!floor || w.end > floor.end)) floor = { start: w.start, end: w.end, edge_block: record.edge.block_number };
      if (below) break;
      continue;
    }
    // At or below the recorded floor, the edge is no higher than the floor's.
    if (!record && !below && newest !== null && floor && w.end <= floor.end && newest - floor.edge_block > horizon) below = true;
    if (!record && below && !walking) {
      if (pastTheEnd(w)) break;
      continue;
    }
    const edge = await edgeOf(w);
    if (!edge) break; // written by an older version: nothing to compare with
    newest ??= edge.block_number;
    below = newest - edge.block_number > horizon;
    if (below && (!floor || w.end > floor.end)) floor = { start: w.start, end: w.end, edge_block: edge.block_number };
    if (!record && below && !walking) {
      if (pastTheEnd(w)) break;
      continue;
    }
    const now = await askEdge(blocks, chainId, edge, below, again.length > 0, `window ${describeWindow(w, axis)} of ${unitKey}`);
    if (now.same) {
      matched.push({ w, edge });
      if (record) proven = true;
      walking = false;
      continue;
    }
    walking = true;
    changed.push({ block_number: edge.block_number, recorded_hash: edge.block_hash, service_hash: now.serviceHash });
    again.push(w);
    lowestChangedFiles = (await state.readCompleted(unitKey, w.start, w.end))?.files.map((f) => f.key) ?? [];
    if (below) {
      tooDeep = await deepRewind(input, { unitKey, chainId, axis, sorted, index: i, edge, newest, horizon, edgeOf });
      break;
    }
  }
  if (tooDeep) return { tooDeep };
  if (again.length > 0) await oldBranchAnswers(blocks, chainId, matched, again, changed);
  const checked = stillTheChain({ sorted, recorded, previous: last, floor, matched, again, proven, commitOf, newest, horizon });
  if (again.length === 0) return { checked };
  again.reverse();
  return { checked, search: forkSearch({ unitKey, chainId, newest: newest!, matched, changed, again, files: lowestChangedFiles }) };
}

/**
 * What the last check recorded of a unit, kept where the window's export is still the one checked
 * (`recorded`), and a window's edge: recorded, or read from its completed record once.
 */
async function lastCheck(state: WindowState, unitKey: string) {
  const commitOf = (w: Interval) => state.commitOf(unitKey, w.start, w.end);
  // Recorded windows whose marker is still the one checked.
  const last = await state.readChecked(unitKey);
  const previous = last?.windows ?? [];
  const recorded = new Map(previous.filter((c) => c.commit === commitOf(c)).map((c) => [windowKey(c), c]));
  const lowestRecorded = Math.min(...[...recorded.values()].map((c) => c.start));
  const edges = new Map<string, BlockEdge>();
  const edgeOf = async (w: Interval): Promise<BlockEdge | undefined> => {
    const key = windowKey(w);
    const known = recorded.get(key)?.edge ?? edges.get(key);
    if (known) return known;
    const edge = (await state.readCompleted(unitKey, w.start, w.end))?.edge;
    if (edge) edges.set(key, edge);
    return edge;
  };
  return { last, recorded, lowestRecorded, commitOf, edgeOf };
}

interface ForkSearchInput {
  unitKey: string;
  chainId: number;
  newest: number;
  matched: { w: Interval; edge: BlockEdge }[];
  changed: ReorgFound['changed_edges'];
  /** The windows to export again, oldest first. */
  again: Interval[];
  /** The files of the lowest changed window. */
  files: string[];
}

/** A unit found reorganised, its fork above the newest matching edge below the lowest changed one (placeFork narrows it). */
function forkSearch(x: ForkSearchInput): ForkSearch {
  const { unitKey, chainId, newest, matched, changed, again } = x;
  const lowestChanged = changed.at(-1)!.block_number;
  const afters = matched.map((m) => m.edge.block_number).filter((n) => n < lowestChanged);
  const forkAfter = afters.length > 0 ? Math.max(...afters) : null;
  return {
    found: {
      unit_key: unitKey,
      chain_id: chainId,
      fork_after_block: forkAfter,
      first_changed_block: changed.at(-1)!.block_number,
      newest_block: newest,
      depth: 0,
      depth_at_most: 0,
      depth_exact: false,
      changed_edges: changed,
      windows: again,
    },
    files: x.files,
  };
}

interface DeepRewindInput {
  unitKey: string;
  chainId: number;
  axis: string;
  sorted: Interval[];
  /** The window whose changed edge lies below the horizon. */
  index: number;
  edge: BlockEdge;
  newest: number;
  horizon: number;
  edgeOf: (w: Interval) => Promise<BlockEdge | undefined>;
}

/**
 * The rewind that covers a reorganisation deeper than the horizon: the newest window below the
 * changed one whose edge still matches is found by galloping down and bisecting (windows read
 * before the reorganisation change above the fork and match below it), and the rewind reaches
 * down to its end, counted from the unit's frontier as --rewind counts.
 */
async function deepRewind(input: ReorgCheckInput, d: DeepRewindInput): Promise<TooDeep> {
  const matches = async (i: number): Promise<boolean> => {
    const edge = await d.edgeOf(d.sorted[i]!);
    // A window without an edge (older version) cannot be asked: the rewind reaches below it.
    return edge !== undefined && (await input.blocks.block(d.chainId, edge.block_number))?.block_hash === edge.block_hash;
  };
  // lo: a window known to match (-1: none); hi: the lowest known changed.
  let hi = d.index;
  let lo = -1;
  for (let step = 1; hi - step >= 0; step *= 2) {
    if (await matches(hi - step)) {
      lo = hi - step;
      break;
    }
    hi -= step;
  }
  if (lo === -1 && hi > 0 && (await matches(0))) lo = 0;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (await matches(mid)) lo = mid;
    else hi = mid;
  }
  const frontier = input.frontier?.(d.unitKey) ?? d.sorted.at(-1)!.end;
  const amount = lo >= 0 ? frontier - d.sorted[lo]!.end : frontier - d.sorted[0]!.start;
  const w = d.sorted[d.index]!;
  const fork =
    lo >= 0
      ? `the newest window still the chain's is ${describeWindow(d.sorted[lo]!, d.axis)}`
      : "no window of the unit is still the chain's";
  return {
    text:
      `chain ${d.chainId}, ${d.unitKey}: block ${d.edge.block_number} (edge of window ${describeWindow(w, d.axis)}) changed, ` +
      `${d.newest - d.edge.block_number} blocks below the newest exported block ${d.newest} (horizon ${d.horizon}); ${fork}`,
    rewind: { amount, text: d.axis === 'time' ? `${amount}s` : String(amount) },
  };
}

/** A unit found reorganised, and the files of its lowest changed window (where the fork is). */
interface ForkSearch {
  found: ReorgFound;
  files: string[];
}

/**
 * The fork of one chain, between the highest block known unchanged and the lowest known replaced:
 * first the units' recorded edges, then the blocks of the rows exported between them, bisected.
 */
async function placeFork(
  input: ReorgCheckInput,
  chainId: number,
  searches: ForkSearch[],
): Promise<{ after: number | null; firstChanged: number }> {
  const afters = searches.map((x) => x.found.fork_after_block).filter((b): b is number => b !== null);
  let after = afters.length > 0 ? Math.max(...afters) : null;
  let firstChanged = Math.min(...searches.map((x) => x.found.first_changed_block));
  const rows = await readBlockHashes(input.state.store, [...new Set(searches.flatMap((x) => x.files))]);
  const between = [...rows.hashes.keys()].filter((b) => (after === null || b > after) && b < firstChanged).sort((a, b) => a - b);
  let lo = 0;
  let hi = between.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const n = between[mid]!;
    const now = await input.blocks.block(chainId, n);
    if (now?.block_hash === rows.hashes.get(n)!.hash) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0) after = between[lo - 1]!;
  if (lo < between.length) firstChanged = between[lo]!;
  return { after, firstChanged };
}
