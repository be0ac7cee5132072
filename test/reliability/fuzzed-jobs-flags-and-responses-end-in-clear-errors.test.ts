/**
 * Bad input, generated (fast-check): job files, CLI flags and service responses with wrong types,
 * missing fields, huge values, odd unicode and path-like names. Every case ends in a clear error
 * (a typed error: exit 1 or 2, never "internal error" with a stack) or a correct export, and
 * nothing is ever written outside the destination (and the staging folder).
 *
 * Seeded: RELIABILITY_SEED=<n> repeats a sequence (the seed is printed). By default each property
 * runs a third of its cases (a new draw every run: over runs the seeds cover what one long run
 * does); INSIGHT_EXPORT_LONG_TESTS=1 runs all (150 job files, 120 flag sets, 60 response sets).
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli.js';
import { InsightExportError } from '../../src/errors.js';
import { eventsDataset } from '../../src/datasets/events.js';
import { transactionsDataset } from '../../src/datasets/transactions.js';
import { loadJob } from '../../src/job/index.js';
import { PartitionedWriter } from '../../src/sink/partitioned-writer.js';
import { InsightClient } from '../../src/source/client.js';
import { TOPIC0 } from '@insight-export/sandbox';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { LONG_TESTS, RELIABILITY_SEED as SEED } from '../helpers/long-tests.js';
import { useSandbox } from '../helpers/sandbox.js';
import { duplicates } from './harness.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({});
/** Cases per property: all under INSIGHT_EXPORT_LONG_TESTS=1, a third by default. */
const CASES = LONG_TESTS ? { jobs: 150, flags: 120, responses: 60 } : { jobs: 50, flags: 40, responses: 20 };
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TRANSFER_TOPIC0 = TOPIC0.Transfer;
const tmp = useTempDir('fuzz-');

// ------------------------------------------------------------------ values and mutations

/** Values that break things: path-like names, odd unicode, huge and non-finite numbers, wrong types. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '../',
    '../../etc/passwd',
    '/etc/passwd',
    '..\\..\\windows\\system32',
    '%2e%2e%2f%2e%2e%2f',
    'a/../../b',
    '.',
    '',
    ' ',
    '\u0000',
    'nul\u0000byte',
    '\u202eevil',
    'ｆｕｌｌ',
    '🦄🦄',
    'e\u0301',
    'NaN',
    'Infinity',
    '-0',
    '1e309',
    '0x',
    `0x${'f'.repeat(40)}`,
    `0x${'z'.repeat(40)}`,
    'latest',
    '2024-02-30',
    '9999-12-31T23:59:59Z',
    '-5d',
    '1d1d1d',
    '{date}/../..',
    '{nope}',
    'C:\\temp',
    'file:///etc/passwd',
    's3://bucket/../x',
    'x'.repeat(5000),
  ),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, 1e308, -1, 0, 0.5, -1e308, 2 ** 64, 1e21),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxKeys: 3 }),
);

type Path = (string | number)[];

function setPath(obj: unknown, path: Path, value: unknown): void {
  let o = obj as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = typeof path[path.indexOf(k) + 1] === 'number' ? [] : {};
    o = o[k] as Record<string | number, unknown>;
  }
  o[path[path.length - 1]!] = value;
}

function deletePath(obj: unknown, path: Path): void {
  let o = obj as Record<string | number, unknown> | undefined;
  for (const k of path.slice(0, -1)) o = (o?.[k] ?? undefined) as Record<string | number, unknown> | undefined;
  if (o && typeof o === 'object') {
    if (Array.isArray(o)) o.splice(Number(path[path.length - 1]), 1);
    else delete o[path[path.length - 1]!];
  }
}

// ------------------------------------------------------------------ running the CLI in this process

interface Outcome {
  code: number;
  out: string;
  err: string;
}

class ExitCalled extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

/** main(argv) with stdout/stderr captured; yargs' --help/--version process.exit becomes an outcome. */
async function cli(argv: string[]): Promise<Outcome> {
  let out = '';
  let err = '';
  const w1 = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  const w2 = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((err += String(chunk)), true));
  const exit = vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    throw new ExitCalled(code ?? 0);
  }) as never);
  try {
    const code = await main(argv).catch((e: unknown) => {
      if (e instanceof ExitCalled) return e.code;
      throw e;
    });
    return { code, out, err };
  } catch (e) {
    if (e instanceof ExitCalled) return { code: e.code, out, err };
    throw e;
  } finally {
    w1.mockRestore();
    w2.mockRestore();
    exit.mockRestore();
  }
}

/** The invariant of every CLI case: a known exit code and no internal error / stack trace. */
function clearOutcome(o: Outcome, what: string): void {
  expect([0, 1, 2, 75], `${what}\n${o.err.slice(0, 2000)}`).toContain(o.code);
  expect(o.err, what).not.toMatch(/internal error|\n\s+at \S+ \(/);
  if (o.code !== 0) expect((o.err + o.out).trim().length, `${what}: a failure says why`).toBeGreaterThan(0);
}

/** Nothing but the given files and folders exists under root. */
function onlyUnder(root: string, allowed: string[]): void {
  const stray = listFiles(root).filter((f) => !allowed.some((a) => f === a || f.startsWith(`${a}/`)));
  expect(stray, `files written outside ${allowed.join(', ')}`).toEqual([]);
}

function baseJob() {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  return {
    name: 'fuzz',
    source: { base_url: sandbox.url, chains: [1] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: susd, events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
    output: { format: 'ndjson', partitioning: '{dataset}/chain_id={chain_id}/date={date}' },
    retries: { max_attempts: 2, timeout: '5s' },
  } as Record<string, unknown>;
}

const JOB_PATHS: Path[] = [
  ['name'],
  ['description'],
  ['source'],
  ['source', 'chains'],
  ['source', 'chains', 0],
  ['source', 'base_url'],
  ['targets'],
  ['targets', 0],
  ['targets', 0, 'wallet'],
  ['targets', 0, 'datasets'],
  ['targets', 0, 'datasets', 0],
  ['targets', 0, 'chains'],
  ['targets', 0, 'filters'],
  ['targets', 1, 'contract'],
  ['targets', 1, 'events'],
  ['targets', 1, 'events', 0],
  ['targets', 1, 'abi'],
  ['range'],
  ['range', 'from'],
  ['range', 'to'],
  ['range', 'chunk'],
  ['range', 'by'],
  ['range', 'safety_lag'],
  ['output'],
  ['output', 'format'],
  ['output', 'partitioning'],
  ['output', 'compression'],
  ['output', 'max_rows_per_file'],
  ['output', 'max_bytes_per_file'],
  ['concurrency', 'requests_in_flight'],
  ['concurrency', 'requests_per_second'],
  ['retries', 'max_attempts'],
  ['retries', 'timeout'],
  ['decode'],
  ['aggregates'],
];

const jobMutation = fc.oneof(
  fc.record({ op: fc.constant('set' as const), path: fc.constantFrom(...JOB_PATHS), value: nasty }),
  fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...JOB_PATHS) }),
  fc.record({
    op: fc.constant('extra' as const),
    path: fc.constantFrom<Path>([], ['source'], ['range'], ['output'], ['targets', 0]),
    key: fc.string({ maxLength: 8 }),
    value: nasty,
  }),
);

const jobCase = fc.record({
  mutations: fc.array(jobMutation, { minLength: 0, maxLength: 3 }),
  encoding: fc.constantFrom('yaml', 'yaml', 'json', 'junk'),
  junk: fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom('{', 'name: [', '\uFEFFname: x', '\t- a', 'a: &x\n  b: *y', ': :', '%YAML 9.9\n---\nx', `${'['.repeat(5000)}`),
  ),
});

describe('fuzzed job files', () => {
  // Found by this fuzzer: the yaml library killed the process (V8 "RegExpCompiler Allocation
  // failed") on the second document nested ~1000 levels deep, e.g. `validate a.yaml b.yaml`.
  it('deeply nested YAML is refused with a located error, however many files', { timeout: 60_000 }, async () => {
    const files: string[] = [];
    const deep = await mkdtemp(join(tmpdir(), 'fuzz-deep-'));
    for (const [i, unit] of ['[', '- ', '{a: ', '[', '- '].entries()) {
      const f = join(deep, `deep-${i}.yaml`);
      await writeFile(f, unit.repeat(5000) + 'x');
      files.push(f);
    }
    for (const f of files) {
      const o = await cli(['validate', f]);
      clearOutcome(o, f);
      expect(o.code).toBe(2);
      expect(o.err).toMatch(/:1:\d+ .*YAML nested more than 100 levels deep/);
    }
    await rm(deep, { recursive: true, force: true });
  });

  it('end in a clear error or a correct export, and write only under the destination', { timeout: 240_000 }, async () => {
    let cases = 0;
    let valid = 0;
    let ran = 0;
    let exported = 0;
    const codes = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(jobCase, async (c) => {
        const root = join(tmp.dir, `job-${cases++}`);
        await mkdir(root, { recursive: true });
        const job = baseJob();
        for (const m of c.mutations) {
          if (m.op === 'set') setPath(job, m.path, m.value);
          else if (m.op === 'delete') deletePath(job, m.path);
          else setPath(job, [...m.path, m.key], m.value);
        }
        const file = join(root, c.encoding === 'json' ? 'job.json' : 'job.yaml');
        await writeFile(file, c.encoding === 'junk' ? c.junk : c.encoding === 'json' ? JSON.stringify(job) : stringify(job));
        const v = await cli(['validate', file]);
        clearOutcome(v, `validate ${JSON.stringify(c).slice(0, 500)}`);
        codes.set(v.code, (codes.get(v.code) ?? 0) + 1);
        if (v.code === 0) {
          valid++;
          // Valid jobs are run (the flags pin the service to the sandbox and the destination).
          const out = join(root, 'out');
          const r = await cli([
            'run',
            file,
            '--destination',
            out,
            '--staging-dir',
            join(root, 'staging'),
            '--base-url',
            sandbox.url,
            '--log-level',
            'silent',
          ]);
          ran++;
          clearOutcome(r, `run ${JSON.stringify(c).slice(0, 500)}`);
          if (r.code === 0) {
            exported++;
            const verified = await verifyDestination({ store: new LocalStore(out), job: await loadJob(file) });
            expect(verified.problems).toEqual([]);
          }
        }
        onlyUnder(root, ['job.yaml', 'job.json', 'out', 'staging']);
        onlyUnder(tmp.dir, [...Array.from({ length: cases }, (_, i) => `job-${i}`)]);
      }),
      { seed: SEED, numRuns: CASES.jobs },
    );
    console.log(
      `[fuzz] job files: seed ${SEED}, ${cases} cases, exit codes of validate ${JSON.stringify(Object.fromEntries(codes))}; ${valid} valid, ${ran} run, ${exported} exported and verified`,
    );
    expect(cases).toBe(CASES.jobs);
  });
});

// ------------------------------------------------------------------ CLI flags

const FLAGS = [
  'format',
  'compression',
  'parquet-engine',
  'partitioning',
  'max-rows-per-file',
  'max-bytes-per-file',
  'requests-in-flight',
  'units-in-flight',
  'requests-per-second',
  'max-attempts',
  'timeout',
  'region',
  'config',
  'shard',
  'rewind',
  'force',
  'json',
  'quick',
  'no-such-flag',
];

const flagCase = fc.record({
  command: fc.constantFrom('run', 'plan', 'validate', 'verify', 'run', 'run', 'nope', ''),
  jobPath: fc.oneof(
    fc.constant('GOOD'),
    fc.constantFrom('../../etc/passwd', '/dev/null', '', 'missing.yaml', '.', '/etc', 'job.yaml\u0000x'),
  ),
  flags: fc.array(fc.tuple(fc.constantFrom(...FLAGS), nasty), { maxLength: 4 }),
});

describe('fuzzed CLI flags', () => {
  it('end in a clear error or a correct export, and write only under the destination', { timeout: 240_000 }, async () => {
    let cases = 0;
    const codes = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(flagCase, async (c) => {
        const root = join(tmp.dir, `flags-${cases++}`);
        await mkdir(root, { recursive: true });
        const good = join(root, 'job.yaml');
        await writeFile(good, stringify(baseJob()));
        const argv: string[] = [];
        if (c.command) argv.push(c.command);
        argv.push(c.jobPath === 'GOOD' ? good : c.jobPath);
        for (const [flag, value] of c.flags) {
          argv.push(`--${flag}`);
          if (typeof value === 'string' || typeof value === 'number') argv.push(String(value));
          else if (value !== true && value !== null) argv.push(JSON.stringify(value));
        }
        // The service, the destination, the staging folder and the log level are pinned (never fuzzed: the service must stay on loopback).
        argv.push(
          '--base-url',
          sandbox.url,
          '--destination',
          join(root, 'out'),
          '--staging-dir',
          join(root, 'staging'),
          '--log-level',
          'silent',
        );
        const o = await cli(argv.filter((a) => a !== '--help' && a !== '--version' && a !== '-h'));
        clearOutcome(o, `argv ${JSON.stringify(argv).slice(0, 600)}`);
        codes.set(o.code, (codes.get(o.code) ?? 0) + 1);
        onlyUnder(root, ['job.yaml', 'out', 'staging']);
      }),
      { seed: SEED, numRuns: CASES.flags },
    );
    console.log(`[fuzz] CLI flags: seed ${SEED}, ${cases} cases, exit codes ${JSON.stringify(Object.fromEntries(codes))}`);
    expect(cases).toBe(CASES.flags);
  });
});

// ------------------------------------------------------------------ service responses

const TX_FIELDS = [
  'hash',
  'block_number',
  'block_timestamp',
  'block_hash',
  'chain_id',
  'from_address',
  'to_address',
  'value',
  'gas',
  'nonce',
  'transaction_index',
  'data',
  'status',
  'gas_used',
  'gas_price',
  'transaction_type',
  'logs_bloom',
  'access_list_json',
];
const EV_FIELDS = [
  'transaction_hash',
  'log_index',
  'address',
  'topics',
  'data',
  'block_number',
  'block_timestamp',
  'block_hash',
  'chain_id',
  'transaction_index',
  'decoded',
];

const responseMutation = fc.oneof(
  fc.record({ kind: fc.constant('field' as const), row: fc.nat(40), field: fc.nat(30), value: nasty }),
  fc.record({ kind: fc.constant('delete-field' as const), row: fc.nat(40), field: fc.nat(30) }),
  fc.record({ kind: fc.constant('row' as const), row: fc.nat(40), value: nasty }),
  fc.record({ kind: fc.constant('duplicate-row' as const), row: fc.nat(40) }),
  fc.record({ kind: fc.constant('extra-field' as const), row: fc.nat(40), key: fc.string({ maxLength: 8 }), value: nasty }),
  fc.record({ kind: fc.constant('data' as const), value: nasty }),
  fc.record({ kind: fc.constant('meta' as const), value: nasty }),
  fc.record({
    kind: fc.constant('body' as const),
    body: fc.oneof(
      fc.constantFrom('', '{', 'null', '[]', '<html>oops</html>', '{"data": [', '\u0000'),
      fc.string({ unit: 'binary', maxLength: 50 }),
    ),
  }),
  fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom(200, 204, 301, 400, 401, 404, 418, 500) }),
);

const responseCase = fc.record({
  route: fc.constantFrom('transactions', 'events'),
  mutations: fc.array(responseMutation, { minLength: 1, maxLength: 2 }),
});
type ResponseCase = typeof responseCase extends fc.Arbitrary<infer T> ? T : never;

describe('fuzzed service responses', () => {
  let proxy: Server;
  let proxyUrl: string;
  let current: ResponseCase | null = null;
  /**
   * item_ids the proxy served in the current case (from the rows as sent), inside the slice their
   * request asked for, of a chain it asked for and of the request's target: a row outside it belongs
   * to another slice, a row of another chain, wallet, contract or event to another unit, and the
   * exporter drops them.
   */
  let served = new Set<string>();
  const untypedProxyErrors: string[] = [];
  const alice = () => sandbox.data.wallet('alice.eth')!.address;
  const susd = () => sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  const ofTarget = (route: 'transactions' | 'events', r: Record<string, unknown>) =>
    route === 'transactions'
      ? [r.from_address, r.to_address].some((a) => text(a).toLowerCase() === alice())
      : text(r.address).toLowerCase() === susd() && Array.isArray(r.topics) && text(r.topics[0]).toLowerCase() === TRANSFER_TOPIC0;

  beforeAll(async () => {
    proxy = createServer((req, res) => {
      rewrite(req, res).catch((err: Error) => {
        // A bug of this proxy, not of the exporter: make the property fail on it.
        untypedProxyErrors.push(err.message);
        res.destroy();
      });
    });
    const rewrite = async (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      const upstream = await fetch(`${sandbox.url}${req.url!.replace(/^\/insights\/v1/, '')}`);
      let status = upstream.status;
      let body = await upstream.text();
      const route = /\/events\//.test(req.url!) ? 'events' : /\/transactions(\?|$)/.test(req.url!) ? 'transactions' : null;
      if (route && status === 200) {
        const json = JSON.parse(body) as { data?: unknown; meta?: unknown };
        if (current && current.route === route) {
          for (const m of current.mutations) {
            const rows = Array.isArray(json.data) ? (json.data as unknown[]) : [];
            const fields = route === 'transactions' ? TX_FIELDS : EV_FIELDS;
            const at = (n: number) => (rows.length ? n % rows.length : -1);
            if (m.kind === 'field' && at(m.row) >= 0 && typeof rows[at(m.row)] === 'object' && rows[at(m.row)] !== null)
              (rows[at(m.row)] as Record<string, unknown>)[fields[m.field % fields.length]!] = m.value;
            else if (m.kind === 'delete-field' && at(m.row) >= 0 && typeof rows[at(m.row)] === 'object' && rows[at(m.row)] !== null)
              delete (rows[at(m.row)] as Record<string, unknown>)[fields[m.field % fields.length]!];
            else if (m.kind === 'row' && at(m.row) >= 0) rows[at(m.row)] = m.value;
            else if (m.kind === 'duplicate-row' && at(m.row) >= 0) rows.splice(at(m.row), 0, structuredClone(rows[at(m.row)]));
            else if (m.kind === 'extra-field' && at(m.row) >= 0 && typeof rows[at(m.row)] === 'object' && rows[at(m.row)] !== null)
              (rows[at(m.row)] as Record<string, unknown>)[`x_${m.key}`] = m.value;
            else if (m.kind === 'data') json.data = m.value;
            else if (m.kind === 'meta') json.meta = m.value;
          }
        }
        if (Array.isArray(json.data)) {
          const bounds = sliceBounds(req.url!);
          for (const r of json.data as Record<string, unknown>[]) {
            if (!r || typeof r !== 'object' || !insideSlice(r, bounds) || !ofAskedChain(r, req.url!) || !ofTarget(route, r)) continue;
            served.add(
              route === 'transactions'
                ? `${text(r.chain_id)}:${text(r.hash).toLowerCase()}:${alice()}`
                : `${text(r.chain_id)}:${text(r.transaction_hash).toLowerCase()}:${text(r.log_index)}`,
            );
          }
        }
        body = JSON.stringify(json);
        const raw = current?.route === route ? current.mutations.find((m) => m.kind === 'body' || m.kind === 'status') : undefined;
        if (raw?.kind === 'body') body = raw.body;
        if (raw?.kind === 'status') status = raw.status;
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 204 || status === 301 ? undefined : body);
    };
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const addr = proxy.address();
    proxyUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/insights/v1`;
  });
  afterAll(async () => {
    await new Promise((r) => proxy?.close(r));
  });

  it('end in typed unit failures or a correct export, and write only under the destination', { timeout: 240_000 }, async () => {
    // Anything but a typed error thrown while reading, mapping or writing rows is a crash.
    const untyped: string[] = [];
    const guard = <A extends unknown[], R>(what: string, fn: (...a: A) => R) =>
      function (this: unknown, ...a: A): R {
        const note = (e: unknown) => {
          if (!(e instanceof InsightExportError)) untyped.push(`${what}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
        };
        try {
          const r = fn.apply(this, a) as R;
          if (r instanceof Promise) return r.catch((e: unknown) => (note(e), Promise.reject(e))) as R;
          return r;
        } catch (e) {
          note(e);
          throw e;
        }
      };
    const originals = {
      wt: InsightClient.prototype.walletTransactions,
      ce: InsightClient.prototype.contractEvents,
      txRow: transactionsDataset.toRow,
      evRow: eventsDataset.toRow,
      write: PartitionedWriter.prototype.write,
    };
    InsightClient.prototype.walletTransactions = guard('walletTransactions', originals.wt);
    InsightClient.prototype.contractEvents = guard('contractEvents', originals.ce);
    transactionsDataset.toRow = guard('transactions.toRow', originals.txRow);
    eventsDataset.toRow = guard('events.toRow', originals.evRow);
    PartitionedWriter.prototype.write = guard('PartitionedWriter.write', originals.write);

    let cases = 0;
    const outcomes = { succeeded: 0, failed: 0, thrown: 0 };
    try {
      await fc.assert(
        fc.asyncProperty(responseCase, async (c) => {
          const root = join(tmp.dir, `resp-${cases++}`);
          const out = join(root, 'out');
          current = c;
          served = new Set();
          let report;
          try {
            report = await exportJob({
              job: { ...baseJob(), source: { base_url: proxyUrl, chains: [1] } },
              dir: root,
              destination: out,
              flags: { maxAttempts: 1, timeout: '3s', stagingDir: join(root, 'staging') },
            });
          } catch (e) {
            expect(e, `case ${JSON.stringify(c).slice(0, 400)}`).toBeInstanceOf(InsightExportError);
            outcomes.thrown++;
            return;
          } finally {
            current = null;
          }
          expect(untyped, `case ${JSON.stringify(c).slice(0, 600)}`).toEqual([]);
          onlyUnder(root, ['job.yaml', 'out', 'staging']);
          const store = new LocalStore(out);
          const verified = await verifyDestination({ store, job: await loadJob(join(root, 'job.yaml')) });
          if (report.status === 'succeeded') {
            outcomes.succeeded++;
            // Accepted responses are exported exactly: every row served once, nothing else.
            expect(verified.problems).toEqual([]);
            const ids = listFiles(out)
              .filter((f) => f.endsWith('.ndjson.gz'))
              .flatMap((f) => readIds(join(out, f)));
            expect(duplicates(ids)).toEqual([]);
            expect(new Set(ids)).toEqual(served);
          } else {
            outcomes.failed++;
            expect(report.status).toBe('failed');
            for (const f of report.failed) expect(f.error.length).toBeGreaterThan(0);
            // Failed windows leave nothing behind: only missing windows.
            expect(verified.problems.map((p) => p.kind).filter((k) => k !== 'missing-windows')).toEqual([]);
          }
        }),
        { seed: SEED, numRuns: CASES.responses },
      );
    } finally {
      InsightClient.prototype.walletTransactions = originals.wt;
      InsightClient.prototype.contractEvents = originals.ce;
      transactionsDataset.toRow = originals.txRow;
      eventsDataset.toRow = originals.evRow;
      PartitionedWriter.prototype.write = originals.write;
    }
    expect(untypedProxyErrors).toEqual([]);
    console.log(`[fuzz] service responses: seed ${SEED}, ${cases} cases: ${JSON.stringify(outcomes)}; untyped errors: ${untyped.length}`);
    expect(cases).toBe(CASES.responses);
  });
});

/** The slice a request asked for: [field, lowest, first above] per bounded field. */
function sliceBounds(url: string): [string, number, number][] {
  const params = new URL(url, 'http://proxy').searchParams;
  const fields = new Set([...params.keys()].flatMap((k) => /^filter_(\w+)_(?:gte|lt)$/.exec(k)?.[1] ?? []));
  return [...fields].map((f) => [f, Number(params.get(`filter_${f}_gte`) ?? -Infinity), Number(params.get(`filter_${f}_lt`) ?? Infinity)]);
}

/** Whether a row as sent is of a chain the request asked for; a chain_id that is no integer counts as asked (the exporter must then reject the answer). */
function ofAskedChain(row: Record<string, unknown>, url: string): boolean {
  const asked = new URL(url, 'http://proxy').searchParams.getAll('chain_id').map(Number);
  const v = row.chain_id;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
  return n === undefined || !Number.isSafeInteger(n) || asked.length === 0 || asked.includes(n);
}

/**
 * Whether a row as sent lies inside the slice. A value that is no integer (nor, for
 * block_timestamp, a datetime) counts as inside: the exporter must then reject the answer.
 */
function insideSlice(row: Record<string, unknown>, bounds: [string, number, number][]): boolean {
  return bounds.every(([field, lo, hi]) => {
    const v = row[field];
    let n: number | undefined;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'string' && /^(-?\d+|0[xX][0-9a-fA-F]+)$/.test(v)) n = Number(v);
    else if (typeof v === 'string' && field === 'block_timestamp' && /^\d{4}-/.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))))
      n = Math.floor(Date.parse(v.length === 19 ? `${v.replace(' ', 'T')}Z` : v.replace(' ', 'T')) / 1000);
    return n === undefined || !Number.isSafeInteger(n) || (n >= lo && n < hi);
  });
}

/** A served value as text (objects with keys such as "toString" cannot go through String()). */
function text(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : (JSON.stringify(v) ?? 'undefined');
}

function readIds(file: string): string[] {
  return gunzipSync(readFileSync(file))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { item_id: string }).item_id);
}
