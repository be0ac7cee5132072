/**
 * Issue 34: every commit (a run's, and those during a run every output.iceberg_commit_interval)
 * adds a manifest, so a table committed a few times an hour would list thousands of them, and a
 * reader plans from every one. Past MAX_MANIFESTS a commit merges the snapshot's entries into one
 * manifest, as Iceberg's merge-append does: every live file still listed once, each with the
 * sequence number of the commit that added it. The bound is lowered to 12 here (the merge is the
 * same at 100; each commit reads every manifest, so 105 commits would cost the suite ~25 s).
 */
import { expect, it } from 'vitest';
import { column } from '../../src/columns/columns.js';
import { decodeManifestList } from '../../src/iceberg/avro-files.js';
import { commitTable, keyOf, readSnapshotManifests, type LiveFile } from '../../src/iceberg/commit-table.js';
import { currentSnapshot } from '../../src/iceberg/table-metadata.js';
import { destinationUri, readCurrentVersion } from '../../src/iceberg/index.js';
import { silentLogger } from '../../src/log.js';
import { LocalStore } from '../../src/store/local.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('iceberg-manifests-');
const MAX_MANIFESTS = 12;
const COLUMNS = [column('chain_id', 'int64', 'Chain id', false), column('block_time', 'timestamp', 'Block time', false)];

const file = (n: number): LiveFile => ({
  key: `t/chain_id=1/date=2024-02-01/f${n}.iceberg.parquet`,
  rows: n,
  bytes: 100 + n,
  partition: { chain_id: 1, block_time_day: 19754 },
});

it('the commit that would list more than its bound of manifests merges them into one; every file keeps the sequence number of its commit', async () => {
  const store = new LocalStore(tmp.dir);
  const files: LiveFile[] = [];
  const current = async () => currentSnapshot((await readCurrentVersion(store, 't'))!.meta)!;
  /** The manifests the current snapshot lists (its manifest list only). */
  const listed = async () =>
    (await decodeManifestList((await store.get(keyOf(destinationUri(store), (await current())['manifest-list'], 'test')))!.body)).length;
  let mergedAt = 0;
  let before = 0;
  for (let n = 1; n <= MAX_MANIFESTS + 5; n++) {
    // Commit 6 also replaces file 1 (its manifest then lists no live file), so the history has an overwrite.
    if (n === 6) files.splice(0, 1);
    files.push(file(n));
    await commitTable({
      store,
      table: 't',
      rootUri: destinationUri(store),
      columns: COLUMNS,
      partitioning: '{dataset}/chain_id={chain_id}/date={date}',
      compression: 'zstd',
      contents: async () => ({ files: [...files], summary: {} }),
      logger: silentLogger,
      maxManifests: MAX_MANIFESTS,
    });
    const count = await listed();
    expect(count).toBeLessThanOrEqual(MAX_MANIFESTS);
    if (count < before) {
      expect(mergedAt, 'one merge').toBe(0);
      // The commit's own manifest would have made MAX_MANIFESTS + 1.
      expect(before + 1).toBe(MAX_MANIFESTS + 1);
      expect(count).toBe(1);
      mergedAt = n;
    }
    before = count;
  }
  expect(mergedAt).toBeGreaterThan(0);
  const manifests = await readSnapshotManifests(store, destinationUri(store), (await readCurrentVersion(store, 't'))!.meta);
  expect(manifests).toHaveLength(1 + MAX_MANIFESTS + 5 - mergedAt);
  const live = manifests.flatMap((m) => m.entries.filter((e) => e.status !== 2));
  const at = (path: string) => Number(/f(\d+)\.iceberg/.exec(path)![1]);
  expect(live.map((e) => at(e.data_file.file_path)).sort((a, b) => a - b)).toEqual(files.map((f) => at(f.key)));
  for (const e of live) {
    expect(e.sequence_number, e.data_file.file_path).toBe(at(e.data_file.file_path));
    expect(e.data_file.record_count).toBe(at(e.data_file.file_path));
  }
  const merged = manifests.find((m) => m.entries.length > 1)!;
  expect(merged.file).toMatchObject({
    sequence_number: mergedAt,
    min_sequence_number: 2,
    existing_files_count: mergedAt - 2,
    added_files_count: 1,
    deleted_files_count: 0,
  });
});
