/**
 * Issue 34: two writers committing to one table. The conditional create of the next metadata file
 * lets one win; the other reads the table again and commits on top (its snapshot's parent is the
 * winner's, whose snapshot stays in the history), saying so in the log. A writer that loses every
 * attempt stops with exit code 75 and leaves the table as the winners made it. Local and S3.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { column } from '../../src/columns/columns.js';
import { commitTable, type LiveFile } from '../../src/iceberg/commit-table.js';
import { destinationUri, IcebergCommitConflictError, MAX_COMMIT_ATTEMPTS, readCurrentVersion } from '../../src/iceberg/index.js';
import { silentLogger } from '../../src/log.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore, PutOptions } from '../../src/store/store.js';
import { useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('iceberg-race-');
const bucket = useTestBucket('iceberg-race');
const COLUMNS = [column('chain_id', 'int64', 'Chain id', false), column('block_time', 'timestamp', 'Block time', false)];
const PARTITIONING = '{dataset}/chain_id={chain_id}/date={date}';

const file = (day: number): LiveFile => ({
  key: `t/chain_id=1/date=2024-02-0${day}/f${day}.iceberg.parquet`,
  rows: day,
  bytes: 100 + day,
  partition: { chain_id: 1, block_time_day: 19753 + day },
});

function commit(store: ObjectStore, files: LiveFile[] | (() => LiveFile[]), logger = silentLogger) {
  return commitTable({
    store,
    table: 't',
    rootUri: destinationUri(store),
    columns: COLUMNS,
    partitioning: PARTITIONING,
    compression: 'zstd',
    contents: async () => ({ files: typeof files === 'function' ? files() : files, summary: {} }),
    logger,
  });
}

/** A store on which another writer commits `rival` just before each of the first `races` metadata files this one writes. */
function racedStore(inner: ObjectStore, races: number, rival: () => LiveFile[]): ObjectStore {
  let raced = 0;
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'put') return Reflect.get(target, prop, receiver) as unknown;
      return async (key: string, body: Buffer | string, opts?: PutOptions) => {
        if (key.endsWith('.metadata.json') && raced < races) {
          raced++;
          await commit(inner, rival());
        }
        return inner.put(key, body, opts);
      };
    },
  });
}

describe.each(['local', 's3'] as const)('a %s destination', (kind) => {
  let n = 0;
  const store = () => (kind === 'local' ? new LocalStore(`${tmp.dir}/${kind}-${n++}`) : bucket.store(`race-${n++}`));

  it('the loser of a race reads the table again and commits on top of the winner, logging the retry', async () => {
    const inner = store();
    await commit(inner, [file(1)]);
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _e, cb) => (lines.push(chunk.toString()), cb()) }));
    const done = await commit(
      racedStore(inner, 1, () => [file(1), file(2)]),
      [file(1), file(3)],
      logger,
    );
    expect(done).toMatchObject({ operation: 'overwrite', added_files: 1, deleted_files: 1 });
    const current = (await readCurrentVersion(inner, 't'))!;
    expect(current.version).toBe(3);
    const [first, rival, mine] = current.meta.snapshots;
    expect(rival!['parent-snapshot-id']).toBe(first!['snapshot-id']);
    expect(mine!['parent-snapshot-id']).toBe(rival!['snapshot-id']);
    expect(mine!.summary['total-data-files']).toBe('2');
    expect(lines.join('')).toContain('another writer committed to the Iceberg table first');
  });

  it("the loser of a race commits the state as it reads it after the winner's commit: the winner's files stay", async () => {
    const inner = store();
    await commit(inner, [file(1)]);
    // One state two writers commit: this one added file 3; the rival adds file 2 and commits first
    // what it read before file 3 was added.
    const state = [file(1), file(3)];
    const done = await commit(
      racedStore(inner, 1, () => (state.push(file(2)), [file(1), file(2)])),
      () => [...state],
    );
    expect(done).toMatchObject({ operation: 'append', added_files: 1, deleted_files: 0 });
    const current = (await readCurrentVersion(inner, 't'))!;
    expect(current.meta.snapshots.at(-1)!.summary['total-data-files']).toBe('3');
  });

  it('a writer that loses every attempt stops with exit code 75 and the winners keep their snapshots', async () => {
    const inner = store();
    await commit(inner, [file(1)]);
    let day = 1;
    const err = await commit(
      racedStore(inner, MAX_COMMIT_ATTEMPTS, () => [file(1), file(++day)]),
      [file(1), file(9)],
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IcebergCommitConflictError);
    expect((err as IcebergCommitConflictError).exitCode).toBe(75);
    const current = (await readCurrentVersion(inner, 't'))!;
    expect(current.version).toBe(1 + MAX_COMMIT_ATTEMPTS);
    expect(current.meta.snapshots).toHaveLength(1 + MAX_COMMIT_ATTEMPTS);
  });
});
