/** A built chain's indexes: its logs numbered per block, its rows by actor and by event (what the routes look up). */
import type { ChainState } from './chain-state.js';

/** Log indexes: one log per successful token or unknown call, numbered within the block. */
export function numberLogs(c: ChainState, n: number): void {
  let logCount = 0;
  let blockLogs = 0;
  for (let i = 0; i < n; i++) {
    if (c.txIndex[i] === 0) blockLogs = 0;
    if (c.hasLog(i)) {
      c.logIndex[i] = blockLogs++;
      logCount++;
    }
  }
  c.logCount = logCount;
}

/** The rows of each actor (as sender or recipient; a self-transfer once), as offsets into one array. */
export function indexByActor(c: ChainState, n: number, actorCount: number): void {
  const A = actorCount;
  const offsets = new Uint32Array(A + 1);
  for (let i = 0; i < n; i++) {
    offsets[c.from[i]! + 1]!++;
    const t = c.to[i]!;
    if (t >= 0 && t !== c.from[i]) offsets[t + 1]!++;
  }
  for (let a = 0; a < A; a++) offsets[a + 1]! += offsets[a]!;
  const rows = new Uint32Array(offsets[A]!);
  const fill = offsets.slice(0, A);
  for (let i = 0; i < n; i++) {
    rows[fill[c.from[i]!]!++] = i;
    const t = c.to[i]!;
    if (t >= 0 && t !== c.from[i]) rows[fill[t]!++] = i;
  }
  c.actorOffsets = offsets;
  c.actorRows = rows;
}

/** The rows of each (contract slot, event slot) that logged, as offsets into one array. */
export function indexByEvent(c: ChainState, n: number): void {
  const S = c.contractActors.length * 2;
  const eOffsets = new Uint32Array(S + 1);
  const keyOf = (i: number) => c.contractSlot.get(c.to[i]!)! * 2 + c.eventSlot(i);
  for (let i = 0; i < n; i++) if (c.hasLog(i)) eOffsets[keyOf(i) + 1]!++;
  for (let s = 0; s < S; s++) eOffsets[s + 1]! += eOffsets[s]!;
  const eRows = new Uint32Array(eOffsets[S]!);
  const eFill = eOffsets.slice(0, S);
  for (let i = 0; i < n; i++) if (c.hasLog(i)) eRows[eFill[keyOf(i)]!++] = i;
  c.eventOffsets = eOffsets;
  c.eventRows = eRows;
}
