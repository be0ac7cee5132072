/**
 * Issue 12: against a sandbox that pages like the real indexer (UNION ALL with a doubled offset,
 * unstable ties, default limit 5 and no caps) and, in the hostile profile, also repeats earlier
 * rows and answers 200 with an error body or without data, the demo's targets (a wallet on three
 * chains and a token's Transfer events) export exactly the rows the sandbox holds: same count,
 * same item_id set, no duplicate, every field equal; Parquet and NDJSON, local and S3. Pages are
 * small (pageSize 20) so that windows are split many times. Issue 42: the hostile profile also
 * answers inconsistently for a while (empty answers, a lagging replica, a stale cache...), which
 * no single answer shows; each hostile case gets its own sandbox, is made consistent after the
 * first run, and the next run's settle recount makes the files exact without an operator.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { startSandbox, type Sandbox, type SandboxProfile } from '@insight-export/sandbox';
import type { TransactionRecord } from '../../src/source/records.js';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import {
  downloadPrefix,
  expectedTransactionRow,
  expectedTransferRow,
  exportJob,
  readTable,
  truthContractEvents,
  truthWalletTransactions,
  unixDay,
  type CanonRow,
  type OutputFormat,
} from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';

const CHAINS = [1, 8453, 42161];
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const EVENTS_TABLE = eventTableForSignature(TRANSFER);
const RANGE = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-03') };
const bucket = useTestBucket('e2e-indexer');
const tmp = useTempDir('e2e-indexer-');
// The AWS SDK reads the credentials from the environment (its default chain), as in production.
const s3Env = useS3CredentialsInEnv();

interface Case {
  destination: 'local' | 's3';
  format: OutputFormat;
  engine?: 'duckdb' | 'hyparquet';
}

const PROFILES: [SandboxProfile, Case[]][] = [
  [
    'indexer',
    [
      { destination: 'local', format: 'parquet', engine: 'duckdb' },
      { destination: 's3', format: 'ndjson' },
    ],
  ],
  [
    'hostile',
    [
      { destination: 'local', format: 'ndjson' },
      { destination: 's3', format: 'parquet', engine: 'hyparquet' },
    ],
  ],
];

describe.each(PROFILES)('under --profile %s', (profile, cases) => {
  const sandbox = useSandbox({ seed: 42, transactions: 8_000, profile });
  const alice = () => sandbox.data.wallet('alice.eth')!;
  const tokens = () => sandbox.data.contracts.filter((c) => c.symbol === 'SUSD');
  const job = (name: string, format: OutputFormat) => ({
    name,
    source: { base_url: 'sandbox', chains: CHAINS },
    targets: [
      { wallet: alice().address, datasets: ['transactions'] },
      ...tokens().map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
    ],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    decode: false,
    output: { format },
  });

  it.each(cases)(
    'the demo’s wallet and token export exactly the sandbox rows: $format to $destination',
    async (c) => {
      const name = `${profile}-${c.destination}-${c.format}`;
      const dir = join(tmp.dir, name);
      const destination = c.destination === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${name}`;
      const run = (service: Sandbox) =>
        exportJob({
          job: job('e2e-indexer', c.format),
          dir,
          sandbox: service,
          destination,
          env: c.destination === 's3' ? s3Env : {},
          flags: { format: c.format, ...(c.engine ? { parquetEngine: c.engine } : {}) },
          pageSize: 20,
        });
      let report: RunReport;
      let rowsWritten: number;
      if (profile === 'hostile') {
        const service = await startSandbox({ seed: 42, transactions: 8_000, profile });
        try {
          const first = await run(service);
          service.consistent();
          report = await run(service);
          rowsWritten = first.rows + report.rows;
        } finally {
          await service.close();
        }
      } else {
        report = await run(sandbox);
        rowsWritten = report.rows;
      }
      expect(report.status).toBe('succeeded');

      const transactions: TransactionRecord[] = truthWalletTransactions(sandbox.data, alice().address, CHAINS, RANGE);
      const events = tokens().flatMap((t) => truthContractEvents(sandbox.data, t.address, TRANSFER, [t.chainId], RANGE));
      expect(transactions.length).toBeGreaterThan(200); // several splits per window at 20 rows a request
      expect(transactions.some((t) => t.from_address === t.to_address)).toBe(true); // self-transfers come twice from the union
      // Under the hostile profile the second run re-exports the windows its recount found short.
      if (profile === 'hostile') expect(rowsWritten).toBeGreaterThanOrEqual(transactions.length + events.length);
      else expect(rowsWritten).toBe(transactions.length + events.length);

      const root = c.destination === 'local' ? join(dir, 'out') : join(dir, 'downloaded');
      if (c.destination === 's3') await downloadPrefix(bucket.client, bucket.bucket, name, root);
      const check = async (table: string, expected: CanonRow[]) => {
        const got = await readTable(root, table, c.format);
        expect(got.length).toBe(expected.length);
        const ids = got.map((r) => r.item_id as string);
        expect(new Set(ids).size).toBe(got.length);
        const want = new Map(expected.map((r) => [r.item_id as string, r]));
        expect(new Set(ids)).toEqual(new Set(want.keys()));
        for (const row of got) expect(row).toEqual(want.get(row.item_id as string));
      };
      await check(
        'transactions',
        transactions.map((t) => expectedTransactionRow(t, alice().address)),
      );
      await check(
        EVENTS_TABLE,
        events.map((e) => expectedTransferRow(e, sandbox.data)),
      );

      if (c.destination === 'local') {
        const verified = await verifyDestination({ store: new LocalStore(root), job: await loadJob(join(dir, 'job.yaml')) });
        expect(verified.problems).toEqual([]);
        expect(verified.rows.distinct).toBe(transactions.length + events.length);
      }
    },
    120_000,
  );
});
