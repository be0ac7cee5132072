/** The files completed windows list, checked by verify: present, of their size, row count and content, no row twice. */
import pLimit from 'p-limit';
import { hashStoredFile, readItemIds } from './exported-files.js';
import type { ContentCheck } from './verify-content.js';
import { errorMessage } from '../errors.js';
import { formatInterval } from '../plan/format-interval.js';
import { axisOfStreamKey } from '../plan/stream-key.js';
import type { FileRecord, WindowRecord } from './window-state.js';
import type { VerifyOptions, VerifyProblem } from './verify-report.js';

/** Every listed file: present, of the recorded size and (unless quick) row count, no item_id twice. */
export async function checkListedFiles(
  opts: VerifyOptions,
  records: WindowRecord[],
  problems: VerifyProblem[],
  content: ContentCheck,
): Promise<{ counted: number; distinct: number; checkedRows: number; present: Map<string, number> }> {
  const { store } = opts;
  const limit = pLimit(opts.concurrency ?? 8);
  /** Files that are there, with their rows (counted, or as recorded with `quick`). */
  const present = new Map<string, number>();
  let counted = 0;
  let distinct = 0;
  let checkedRows = 0;
  // Window by window: the item_ids of one window are held while its files are read.
  await Promise.all(
    records.map((rec) =>
      limit(async () => {
        const window = [rec.start, rec.end] as [number, number];
        const ids = new Set<string>();
        let windowRows = 0;
        for (const f of rec.files) {
          const key = f.key;
          const where = { unit: rec.unit_key, window, key };
          const info = await store.head(key);
          if (!info) {
            problems.push({
              kind: 'missing-file',
              ...where,
              message: `file listed by window ${formatInterval(axisOfStreamKey(rec.unit_key), rec)} is missing`,
            });
            continue;
          }
          if (info.size !== f.bytes) {
            problems.push({ kind: 'size-mismatch', ...where, message: `file has ${info.size} bytes, the window records ${f.bytes}` });
          }
          present.set(key, f.rows);
          const fileIds = await readListedFile(opts, f, where, problems, content);
          if (!fileIds) continue;
          const rows = fileIds.length;
          present.set(key, rows);
          checkedRows++;
          counted += rows;
          windowRows += rows;
          if (rows !== f.rows) {
            problems.push({ kind: 'row-count-mismatch', ...where, message: `file holds ${rows} rows, the window records ${f.rows}` });
          }
          const inFile = new Set(fileIds).size;
          if (inFile !== rows) {
            problems.push({
              kind: 'duplicate-rows',
              ...where,
              message: `file holds ${rows} rows but ${inFile} distinct item_ids: ${rows - inFile} row(s) twice`,
            });
          }
          for (const id of fileIds) ids.add(id);
        }
        distinct += ids.size;
        if (!opts.quick && ids.size < windowRows && rec.files.length > 1) {
          problems.push({
            kind: 'duplicate-rows',
            unit: rec.unit_key,
            window,
            message: `window holds ${windowRows} rows but ${ids.size} distinct item_ids across its ${rec.files.length} files`,
          });
        }
      }),
    ),
  );
  return { counted, distinct, checkedRows, present };
}

/**
 * A listed file read: its item_ids (null with `quick`, which reads it only to compare its content),
 * its content compared when asked (--content); null too when it cannot be read (a problem then).
 */
async function readListedFile(
  opts: VerifyOptions,
  f: FileRecord,
  where: { unit: string; window: [number, number]; key: string },
  problems: VerifyProblem[],
  content: ContentCheck,
): Promise<string[] | null> {
  const hash = content.hashFor(f);
  let ids: string[] | null = null;
  try {
    if (!opts.quick) ids = await readItemIds(opts.store, f.key, hash ?? undefined);
    else if (hash) await hashStoredFile(opts.store, f.key, hash);
  } catch (err) {
    const what = opts.quick ? 'content cannot be read' : 'rows cannot be counted';
    problems.push({ kind: 'unreadable-file', ...where, message: `${what}: ${errorMessage(err).split('\n')[0]}` });
    return null;
  }
  const differs = hash ? content.compare(f, hash) : null;
  if (differs) problems.push({ kind: 'content-mismatch', ...where, message: differs });
  return ids;
}
