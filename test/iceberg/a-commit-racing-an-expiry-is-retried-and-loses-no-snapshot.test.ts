/**
 * Issue 34.3: an expiry commits like any writer. When a run commits between the expiry's read of
 * the table and its write, the expiry's conditional create fails, it says so in the log, reads
 * the table again and expires on top of the run's snapshot, which stays current. When an expiry
 * commits between a run's read and write, the run's commit retries on top of the expiry's
 * version: the expired snapshots do not come back. Either way the table reads as the state, and
 * verify passes. Local and S3.
 */
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { expireSnapshots } from '../../src/iceberg/expire-snapshots.js';
import { commitIcebergTables, metadataKey, readCurrentVersion } from '../../src/iceberg/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { jobTables } from '../../src/run/tables.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore, PutOptions } from '../../src/store/store.js';
import { exportJob, type CanonRow } from '../helpers/export.js';
import { DAY, parquetRows, TABLE, verifyIceberg, walletJob } from '../helpers/iceberg-history.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 44, transactions: 2_000 });
const bucket = useTestBucket('iceberg-expire-race');
const s3Env = useS3CredentialsInEnv();
const tmp = useTempDir('iceberg-expire-race-');

const JOB = 'exprace';
const job = walletJob(JOB);

let truth: CanonRow[];

beforeAll(async () => {
  truth = await parquetRows(job, join(tmp.dir, 'truth'), sandbox);
});

/** A store on which `rival` runs just before the first metadata file this one creates. */
function racedStore(inner: ObjectStore, rival: () => Promise<unknown>): ObjectStore {
  let raced = false;
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'put') return Reflect.get(target, prop, receiver) as unknown;
      return async (key: string, body: Buffer | string, opts?: PutOptions) => {
        if (key.endsWith('.metadata.json') && !raced) {
          raced = true;
          await rival();
        }
        return inner.put(key, body, opts);
      };
    },
  });
}

function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _e, cb) => (lines.push(chunk.toString()), cb()) }));
  return { logger, lines };
}

const ids = (list: { 'snapshot-id': number }[]) => list.map((s) => s['snapshot-id']);

describe.each(['local', 's3'] as const)('a %s destination', (kind) => {
  const prefix = 'race';
  let dir: string;
  let store: ObjectStore;
  const destination = () => (kind === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`);
  const run = async () => {
    const r = await exportJob({
      job,
      dir,
      sandbox,
      destination: destination(),
      env: kind === 's3' ? s3Env : {},
      flags: { format: 'iceberg' },
      force: true,
    });
    expect(r.status).toBe('succeeded');
  };
  const expire = (on: ObjectStore, now: number, logger: Logger = silentLogger) =>
    expireSnapshots({ store: on, state: new WindowState(store, JOB), tables: [TABLE], retentionMs: 7 * DAY, now: () => now, logger });
  const snapshots = async () => (await readCurrentVersion(store, TABLE))!.meta;
  const expectWholeAndVerified = async () => {
    expect(sortedRows(await icebirdRows(store, TABLE))).toEqual(sortedRows(truth));
    const { code, report } = await verifyIceberg({ jobFile: join(dir, 'job.yaml'), destination: destination(), sandbox, s3Env });
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
  };

  beforeAll(async () => {
    dir = join(tmp.dir, kind);
    store = kind === 'local' ? new LocalStore(join(dir, 'out')) : bucket.store(prefix);
    for (let i = 0; i < 3; i++) await run();
    expect((await snapshots()).snapshots).toHaveLength(3);
  });

  it("an expiry that loses the race to a run's commit reads the table again and keeps the run's snapshot current", async () => {
    const before = await snapshots();
    const now = before.snapshots[2]!['timestamp-ms'] + 8 * DAY;
    const { logger, lines } = capturingLogger();
    const report = await expire(racedStore(store, run), now, logger);
    expect(lines.join('')).toContain('another writer committed to the Iceberg table first: reading it again');

    const after = await snapshots();
    const rival = after.snapshots.at(-1)!;
    expect(ids(before.snapshots)).not.toContain(rival['snapshot-id']);
    expect(after['current-snapshot-id']).toBe(rival['snapshot-id']);
    expect(ids(after.snapshots)).toEqual([rival['snapshot-id']]);
    expect(report.tables[0]).toMatchObject({ metadata_key: metadataKey(TABLE, 5), expired_snapshots: ids(before.snapshots) });
    await expectWholeAndVerified();
  });

  it("a run's commit that loses the race to an expiry commits on top of it: the expired snapshots stay expired", async () => {
    await run();
    await run();
    // The table as a run that died before its table commit leaves it: one version behind the state.
    const lagging = (await readCurrentVersion(store, TABLE))!;
    await store.delete(lagging.key);
    const before = await snapshots();
    expect(before.snapshots).toHaveLength(2);
    const [old, kept] = before.snapshots as [(typeof before.snapshots)[0], (typeof before.snapshots)[0]];

    const { logger, lines } = capturingLogger();
    const tables = await jobTables(await loadJob(join(dir, 'job.yaml')));
    const committed = await commitIcebergTables({
      store: racedStore(store, () => expire(store, kept['timestamp-ms'] + 7 * DAY - 1)),
      state: new WindowState(store, JOB),
      tables,
      partitioning: '{dataset}/chain_id={chain_id}/date={date}',
      compression: 'zstd',
      runId: 'racer',
      logger,
    });
    expect(lines.join('')).toContain('another writer committed to the Iceberg table first: reading it again');
    expect(committed).toMatchObject([{ table: TABLE, operation: 'overwrite' }]);

    const after = await snapshots();
    expect(ids(after.snapshots)).not.toContain(old['snapshot-id']);
    expect(ids(after.snapshots)).toEqual([kept['snapshot-id'], committed[0]!.snapshot_id]);
    expect(after.snapshots[1]!['parent-snapshot-id']).toBe(kept['snapshot-id']);
    await expectWholeAndVerified();
  });
});
