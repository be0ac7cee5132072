import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { WindowState, type WindowRecord } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';

const storeOf = (at: string | ObjectStore) => (typeof at === 'string' ? new LocalStore(at) : at);

/**
 * Every completed window of a job at a destination (folded into unit manifests or still in its
 * marker), with the key of its marker: a record written at that key is the window's newest commit.
 */
export async function completedWindows(at: string | ObjectStore, job: string): Promise<{ key: string; record: WindowRecord }[]> {
  const state = new WindowState(storeOf(at), job);
  const out: { key: string; record: WindowRecord }[] = [];
  for await (const record of state.completedRecords()) {
    out.push({ key: state.completedKey(record.unit_key, record.start, record.end), record });
  }
  return out;
}

/**
 * Writes a job's completed windows back as one marker each and removes the unit manifests: the
 * layout of destinations written before manifests (and what a test plants damage in, window by window).
 */
export async function unfoldCompletedWindows(dir: string, job: string): Promise<{ key: string; record: WindowRecord }[]> {
  const store = new LocalStore(dir);
  const windows = await completedWindows(store, job);
  for (const w of windows) await store.put(w.key, JSON.stringify(w.record));
  for (const folder of ['units', 'segments']) await rm(join(dir, '_state', job, folder), { recursive: true, force: true });
  return windows;
}

/** A completed window's record listing `keys` (one row each), as a commit writes it. */
export function windowRecord(
  unitKey: string,
  window: { start: number; end: number },
  runId: string,
  keys: string[] = [],
  opts: { bytes?: number; completedAt?: string } = {},
): WindowRecord {
  return {
    unit_key: unitKey,
    start: window.start,
    end: window.end,
    rows: keys.length,
    files: keys.map((key) => ({ key, rows: 1, bytes: opts.bytes ?? 1 })),
    run_id: runId,
    completed_at: opts.completedAt ?? new Date().toISOString(),
  };
}
