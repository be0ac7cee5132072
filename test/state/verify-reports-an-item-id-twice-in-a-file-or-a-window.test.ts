/**
 * `verify` counts distinct item_ids per file and per window: a row written twice (in one file, or
 * in two files of one window) is a failure, even when the row counts agree with the markers.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { loadJob } from '../../src/job/index.js';
import { verifyDestination } from '../../src/state/verify.js';
import { readItemIds } from '../../src/state/exported-files.js';
import { LocalStore } from '../../src/store/local.js';
import { unfoldCompletedWindows } from '../helpers/completed-windows.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({});
const tmp = useTempDir('verify-dupes-');

describe.each(['parquet', 'ndjson'] as const)('%s', (format) => {
  it(
    'a complete export has as many distinct item_ids as rows; a row twice in a file or in a window fails',
    { timeout: 60_000 },
    async () => {
      const dir = join(tmp.dir, format);
      const out = join(dir, 'out');
      const job = {
        name: 'dupes',
        source: { base_url: sandbox.url, chains: [1] },
        targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
        range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
        output: { format, destination: out },
      };
      const report = await exportJob({ job, dir, jobFileName: 'run.yaml', destination: out });
      expect(report.status).toBe('succeeded');
      const store = new LocalStore(out);
      const loaded = await loadJob(join(dir, 'run.yaml'));
      const ok = await verifyDestination({ store, job: loaded });
      expect(ok.problems).toEqual([]);
      expect(ok.rows).toEqual({ recorded: report.rows, counted: report.rows, distinct: report.rows });

      const markers = await unfoldCompletedWindows(out, 'dupes');
      const [inFile, inWindow] = markers.filter((m) => m.record.files.length === 1 && m.record.rows > 1);
      expect(inWindow).toBeDefined();

      // 1. One row written twice in one file; the marker records the new count and size.
      const file = inFile!.record.files[0]!;
      const path = join(out, file.key);
      if (format === 'ndjson') {
        const lines = gunzipSync(await readFile(path))
          .toString('utf8')
          .split('\n')
          .filter(Boolean);
        await writeFile(path, gzipSync(`${[...lines, lines[0]].join('\n')}\n`));
      } else {
        const ids = await readItemIds(store, file.key);
        await writeFile(
          path,
          Buffer.from(parquetWriteBuffer({ columnData: [{ name: 'item_id', data: [...ids, ids[0]!], type: 'STRING' }] })),
        );
      }
      const size = (await readFile(path)).length;
      const rec1 = { ...inFile!.record, rows: file.rows + 1, files: [{ ...file, rows: file.rows + 1, bytes: size }] };
      await writeFile(join(out, inFile!.key), JSON.stringify(rec1));

      // 2. A window whose file is listed again under a second name: every row of it twice in the window.
      const other = inWindow!.record.files[0]!;
      const copy = other.key.replace(/__(\d{4})(\.[a-z.]+)$/, '__0098$2');
      await writeFile(join(out, copy), await readFile(join(out, other.key)));
      const rec2 = { ...inWindow!.record, rows: other.rows * 2, files: [other, { ...other, key: copy }] };
      await writeFile(join(out, inWindow!.key), JSON.stringify(rec2));

      const bad = await verifyDestination({ store, job: loaded });
      expect(bad.ok).toBe(false);
      expect(bad.problems.map((p) => [p.kind, p.unit, p.window, p.key ?? null])).toEqual(
        expect.arrayContaining([
          ['duplicate-rows', rec1.unit_key, [rec1.start, rec1.end], file.key],
          ['duplicate-rows', rec2.unit_key, [rec2.start, rec2.end], null],
        ]),
      );
      expect(bad.problems).toHaveLength(2);
      expect(bad.rows.distinct).toBe(report.rows);
      expect(bad.rows.counted).toBe(report.rows + 1 + other.rows);
    },
  );
});
