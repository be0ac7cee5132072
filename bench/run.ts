/**
 * The benchmark harness (`npm run bench`): the exporter measured against the physical limit of the
 * same machine, in the same run, on the same pages. Not a test. Writes bench/RESULTS.md.
 *
 *   npm run bench                                   # everything (~15 min on 2 cores, and ~35 min more for the scale part's 1M windows)
 *   npm run bench -- --only throughput --repeats 5  # one part: throughput | rss | latency | ratelimit | wan | startup | scale | workers | paging
 *   npm run bench -- --profile                      # also --cpu-prof every exporter child (bench/profiles/)
 *   options: --tx <sandbox transactions for throughput, latency, rate limit; default 1000000>
 *            --rss-rows <wallet rows, comma-separated; default 1000000,5000000>
 *            --repeats <interleaved repetitions of each throughput measurement; default 3>
 *            --formats <duckdb,hyparquet,ndjson,iceberg,iceberg-catalog: the outputs to run; default duckdb,hyparquet,ndjson
 *                      (iceberg-catalog: committed through the sandbox's REST catalog, served by the harness)>
 *            --chunk <range.chunk of the throughput part's job, e.g. 10m; default 1d>
 *            --batch-windows <on | off: output.batch_windows of the throughput part's exports; default the exporter's>
 *            --units-in-flight <n: override the exporter's units_in_flight in every run>
 *            --node-flags "<flags for the exporter children, e.g. --max-semi-space-size=32>"
 *            --malloc <tuned | default: exporter children with the container image's glibc malloc
 *                      settings (src/run/malloc-tuning.ts; default tuned) or without them>
 *            --out <results file; default bench/RESULTS.md, "-" = stdout only>
 *            --model-workers <e.g. 0,1,2: also run the page-work model (bench/page-work-model.ts)
 *                      with its page work on the main thread (0) or in that many worker threads>
 *            --wan-mbps <bandwidth of the WAN part's link; default 50>
 *            --scale-windows <unit-windows of the scale part's generated states, comma-separated;
 *                      default 10000,100000,1000000: the last alone takes ~30 min on 2 cores>
 *            --scale-wallets <wallets of its job; default 100>
 *            --scale-stores <local,s3: its destinations (s3: a radosgw it starts); default local>
 *            --workers <run --workers counts of the workers part, comma-separated; default 1,2,4>
 *            --paging-tx <sandbox transactions of the paging part; default 200000>
 *            --scale-layout <manifests | markers: how its generated state is kept (markers: older versions', folded by the first run); default manifests>
 *            --server-encoding <cdn | identity: the page server compresses when asked, as a CDN
 *                      does (default), or never (as the previous sessions measured); not the WAN part>
 *
 * The read interface is served by bench/page-server.ts in its own process: the seeded sandbox,
 * rendered once per distinct request and then answered from memory. One warm-up export records
 * the requests a run makes (and fills the cache); then, interleaved `repeats` times:
 *  - limit: a bare client replays exactly those requests with the same concurrency
 *    (requests_in_flight) over an undici pool and only JSON.parses the bodies;
 *  - the exporter (runJob, real plan/state/commit to a local directory) to Parquet with each
 *    engine and to NDJSON.gz.
 * Each measurement runs in a fresh child process; rows/s = rows / wall time inside the child,
 * ratio = exporter rows/s / limit rows/s of the same repetition (median over repetitions).
 * Further parts: peak RSS (getrusage maxrss of the exporter child) for 1M and 5M wallet rows;
 * latency hiding (150 ms per request, 100-row pages) against concurrency / latency x page size;
 * a 20 requests/s server limit (429 + Retry-After beyond it) with the exporter's budget set to 20;
 * a WAN link (80 ms per request, a bandwidth cap) against what the link allows; the start of the
 * built CLI (bench/startup.ts: `--version`, a run of a complete job); the re-run, plan and verify
 * of a complete job against its number of unit-windows, on generated state (bench/scale.ts); `run --workers`
 * 1, 2 and 4 on the throughput job with 6-hour windows (bench/workers.ts). The server answers
 * compressed when asked, as a CDN does; the parts report bytes on the wire per row. Each goal of
 * issue 17 is listed at the end with met / NOT met.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolveConfig } from '../src/config/index.js';
import { loadJob } from '../src/job/index.js';
import { createLogger } from '../src/log.js';
import { sandboxInBundle } from '../test/helpers/sandbox-in-bundle.js';
import { runJob } from '../src/run/run-job.js';
import { limitHeapGrowth } from '../src/run/heap-growth.js';
import { MALLOC_TUNING } from '../src/run/malloc-tuning.js';
import { InsightClient } from '../src/source/client.js';
import { closeDuckDB } from '../src/sink/index.js';
import { runModel, servePageWorkIfWorker, type ModelSpec } from './page-work-model.js';
import { replayRequests } from './replay-requests.js';
import type { PageServerStats } from './page-server-stats.js';
import { childCli, scale, type CliSpec } from './scale.js';
import { workersBench } from './workers.js';

const REPO = resolve(fileURLToPath(import.meta.url), '../..');
const SERVER = join(REPO, 'bench/page-server.ts');
const PROFILES = join(REPO, 'bench/profiles');
const NOTES_MARKER = '<!-- notes: kept by bench/run.ts -->';
/** This file bundled as plain JS (see bundleSelf): what the children run. */
let childScript = fileURLToPath(import.meta.url);

/**
 * The children run this file bundled by esbuild (packages external), as the product runs its
 * tsc-compiled dist/: no tsx loader in their memory, time or profiles.
 */
async function bundleSelf(): Promise<() => void> {
  const dir = join(REPO, 'node_modules', `.insight-export-bench-${process.pid}`);
  childScript = join(dir, 'run.js');
  await build({
    entryPoints: [fileURLToPath(import.meta.url)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    plugins: [sandboxInBundle(REPO)],
    outfile: childScript,
    logLevel: 'warning',
  });
  return () => rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// Child processes: one measurement each

interface ExportSpec {
  kind: 'export';
  label: string;
  baseUrl: string;
  wallet: string;
  chains: number[];
  from: string;
  to: string;
  chunk: string;
  batchWindows?: 'on' | 'off';
  format: 'parquet' | 'ndjson' | 'iceberg';
  engine?: 'duckdb' | 'hyparquet';
  /** output.catalog.uri and .namespace: an Iceberg export committed through that REST catalog. */
  catalogUri?: string;
  catalogNamespace?: string;
  compression?: string;
  requestsInFlight?: number;
  unitsInFlight?: number;
  requestsPerSecond?: number;
  pageSize?: number;
  prefetch?: number;
}

interface LimitSpec {
  kind: 'limit';
  label: string;
  origin: string;
  pathsFile: string;
  concurrency: number;
}

type ChildSpec = ExportSpec | LimitSpec | ModelSpec | CliSpec;

export interface ChildResult {
  label: string;
  rows: number;
  requests: number;
  seconds: number;
  rowsPerSec: number;
  cpuSec: number;
  peakRssMB: number;
  responses429?: number;
  files?: number;
  /** Partition folders holding those files. */
  partitions?: number;
  outputMB?: number;
  /** Requests the exporter's client had open (sent, not yet answered), mean of samples every 10 ms. */
  meanClientInFlight?: number;
  /** Event-loop delay of the exporter process, ms: mean and 99th percentile. */
  loopDelayMs?: { mean: number; p99: number; max: number };
  /** process.memoryUsage() in MB at the sample (every 50 ms) with the highest RSS. */
  memoryAtPeak?: Record<string, number>;
  /** A CLI child (the scale part): the command's exit code and the first lines it printed. */
  exitCode?: number;
  output?: string;
}

/** Counts the client's open HTTP exchanges (a wrapper around InsightClient's sendOnce) and samples them. */
function inFlightSampler(): () => number {
  const proto = InsightClient.prototype as unknown as { sendOnce: (...args: unknown[]) => Promise<unknown> };
  const original = proto.sendOnce;
  let open = 0;
  proto.sendOnce = async function (this: unknown, ...args: unknown[]) {
    open++;
    try {
      return await original.apply(this, args);
    } finally {
      open--;
    }
  };
  let sum = 0;
  let n = 0;
  const timer = setInterval(() => {
    sum += open;
    n++;
  }, 10);
  return () => {
    clearInterval(timer);
    proto.sendOnce = original;
    return n === 0 ? 0 : +(sum / n).toFixed(2);
  };
}

/** Samples process.memoryUsage() and keeps the sample with the highest RSS. */
function memorySampler(): () => Record<string, number> {
  let peak: NodeJS.MemoryUsage = process.memoryUsage();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > peak.rss) peak = m;
  }, 50);
  return () => {
    clearInterval(timer);
    return Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v / 2 ** 20)]));
  };
}

function dirBytes(dir: string): { files: number; bytes: number; partitions: number } {
  let files = 0;
  let bytes = 0;
  const folders = new Set<string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    // Data files only: not the state, not an Iceberg table's metadata (JSON, Avro, windows file).
    if (!e.isFile() || e.parentPath.includes('_state') || e.parentPath.split(sep).includes('metadata')) continue;
    files++;
    folders.add(e.parentPath);
    bytes += statSync(join(e.parentPath, e.name)).size;
  }
  return { files, bytes, partitions: folders.size };
}

function finish(label: string, rows: number, requests: number, t0: number, cpu0: NodeJS.CpuUsage): ChildResult {
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    label,
    rows,
    requests,
    seconds: +seconds.toFixed(2),
    rowsPerSec: Math.round(rows / seconds),
    cpuSec: +((cpu.user + cpu.system) / 1e6).toFixed(2),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

/** The limit: the same requests, the same concurrency, an undici pool, JSON.parse and nothing else. */
async function childLimit(spec: LimitSpec): Promise<ChildResult> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { rows, requests } = await replayRequests(spec.origin, spec.pathsFile, spec.concurrency, (body) => {
    // The run's log holds resolve/<n> answers too (window edges): their `data` is an object, not rows.
    const json = JSON.parse(body.toString('utf8')) as { data: unknown };
    return Array.isArray(json.data) ? json.data.length : 0;
  });
  return finish(spec.label, rows, requests, t0, cpu0);
}

/** The exporter's page work on or off the main thread, without the pipeline (bench/page-work-model.ts). */
async function childModel(spec: ModelSpec): Promise<ChildResult> {
  limitHeapGrowth(); // as runJob does
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { rows, requests } = await runModel(spec, childScript);
  return finish(spec.label, rows, requests, t0, cpu0);
}

async function childExport(spec: ExportSpec): Promise<ChildResult> {
  const work = mkdtempSync(join(tmpdir(), 'insight-bench-'));
  try {
    const jobFile = join(work, 'job.yaml');
    writeFileSync(
      jobFile,
      [
        'name: bench',
        'source:',
        '  base_url: sandbox',
        `  chains: [${spec.chains.join(', ')}]`,
        'targets:',
        `  - wallet: "${spec.wallet}"`,
        '    datasets: [transactions]',
        'range:',
        `  from: "${spec.from}"`,
        `  to: "${spec.to}"`,
        `  chunk: ${spec.chunk}`,
        '',
      ].join('\n'),
    );
    const job = await loadJob(jobFile);
    const config = resolveConfig({
      job,
      env: {},
      configFile: null,
      cliFlags: {
        baseUrl: spec.baseUrl,
        destination: join(work, 'out'),
        stagingDir: join(work, 'staging'),
        format: spec.format,
        ...(spec.engine ? { parquetEngine: spec.engine } : {}),
        ...(spec.compression ? { compression: spec.compression } : {}),
        ...(spec.requestsInFlight ? { requestsInFlight: spec.requestsInFlight } : {}),
        ...(spec.unitsInFlight ? { unitsInFlight: spec.unitsInFlight } : {}),
        ...(spec.requestsPerSecond ? { requestsPerSecond: spec.requestsPerSecond } : {}),
        ...(spec.batchWindows ? { batchWindows: spec.batchWindows } : {}),
        ...(spec.catalogUri ? { catalogUri: spec.catalogUri, catalogNamespace: spec.catalogNamespace } : {}),
      },
      require: ['source', 'destination'],
    });
    const memory = memorySampler();
    const inFlight = inFlightSampler();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const report = await runJob({
      job,
      config,
      logger: createLogger({ level: 'error' }),
      ...(spec.pageSize ? { pageSize: spec.pageSize } : {}),
      ...(spec.prefetch ? { prefetch: spec.prefetch } : {}),
    });
    const meanClientInFlight = inFlight();
    loop.disable();
    const loopDelayMs = {
      mean: +(loop.mean / 1e6).toFixed(1),
      p99: +(loop.percentile(99) / 1e6).toFixed(1),
      max: +(loop.max / 1e6).toFixed(1),
    };
    await closeDuckDB();
    const result = finish(spec.label, report.rows, report.requests, t0, cpu0);
    if (report.status !== 'succeeded') throw new Error(`run ${report.status}: ${JSON.stringify(report.failed.slice(0, 3))}`);
    const out = dirBytes(join(work, 'out'));
    return {
      ...result,
      responses429: report.responses_429,
      files: out.files,
      partitions: out.partitions,
      outputMB: +(out.bytes / 1e6).toFixed(1),
      memoryAtPeak: memory(),
      meanClientInFlight,
      loopDelayMs,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

let profileCount = 0;

/** Runs one measurement in a fresh process and returns what it printed. */
function inChild(spec: ChildSpec, profile: boolean): Promise<ChildResult> {
  if (spec.kind === 'export' && UNITS !== undefined) spec = { ...spec, unitsInFlight: UNITS };
  const exporter = spec.kind === 'export' || spec.kind === 'cli';
  const nodeArgs: string[] = exporter ? [...NODE_FLAGS] : [];
  if (profile && exporter) {
    mkdirSync(PROFILES, { recursive: true });
    const name = `${String(++profileCount).padStart(2, '0')}-${spec.label.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.cpuprofile`;
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${PROFILES}`, `--cpu-prof-name=${name}`);
  }
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [...nodeArgs, childScript, '--child', JSON.stringify(spec)],
      { cwd: REPO, maxBuffer: 16 << 20, encoding: 'utf8', env: exporter ? CHILD_ENV : process.env },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${spec.label}: ${err.message}\n${stderr}`));
        const line = stdout.trim().split('\n').pop()!;
        resolvePromise(JSON.parse(line) as ChildResult);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// The page server

interface PageServer {
  url: string;
  origin: string;
  wallet: string;
  walletRows: number;
  walletRowsByChain: Record<string, number>;
  rangeEnd: string;
  child: ChildProcess;
  get<T>(route: string): Promise<T>;
  stop(): Promise<void>;
}

let SERVER_ENCODING: Options['serverEncoding'] = 'cdn';

function startPageServer(transactions: number, cacheMB: number): Promise<PageServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', SERVER, '--transactions', String(transactions), '--cache-mb', String(cacheMB)],
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolvePromise, reject) => {
    let text = '';
    let ready = false;
    child.on('exit', (code) => reject(new Error(`page server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (ready || !/^ready$/m.test(text)) return;
      ready = true;
      const field = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(text)![1]!;
      const url = field('url');
      const origin = new URL(url).origin;
      child.removeAllListeners('exit');
      const server: PageServer = {
        url,
        origin,
        wallet: field('wallet'),
        walletRows: Number(field('wallet_rows')),
        walletRowsByChain: JSON.parse(field('wallet_rows_by_chain')) as Record<string, number>,
        rangeEnd: field('range_end'),
        child,
        async get<T>(route: string): Promise<T> {
          const res = await fetch(`${origin}${route}`);
          if (!res.ok) throw new Error(`page server ${route}: HTTP ${res.status}`);
          return (await res.json()) as T;
        },
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      };
      server.get(`/_bench/settings?encoding=${SERVER_ENCODING}`).then(() => resolvePromise(server), reject);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Figures

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The page server's median CPU s and cache misses over a run's repetitions. */
function serverCell(work: { cpuSec: number; misses: number }[] | undefined): string {
  if (!work || work.length === 0) return '';
  return `${median(work.map((w) => w.cpuSec)).toFixed(1)} s, ${fmt(median(work.map((w) => w.misses)))}`;
}

function spread(xs: number[], digits = 0): string {
  const f = (x: number) => x.toFixed(digits);
  return xs.length > 1 ? `${f(Math.min(...xs))}–${f(Math.max(...xs))}` : f(xs[0]!);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function machine(): string {
  const c = cpus();
  return `${c[0]?.model ?? 'unknown CPU'}, ${c.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM (${(freemem() / 2 ** 30).toFixed(0)} GiB free at start); Node ${process.version}, ${process.platform} ${process.arch}`;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

interface Options {
  only: Set<string>;
  /** Output formats to run (labels containing one of these words), default all. */
  formats: string[];
  /** Overrides units_in_flight of every export (default: the exporter's default). */
  unitsInFlight?: number;
  /** range.chunk and output.batch_windows of the throughput part's job. */
  chunk: string;
  batchWindows?: 'on' | 'off';
  /** Extra node flags for the exporter children, e.g. "--max-semi-space-size=32". */
  nodeFlags: string[];
  /** Whether exporter children get MALLOC_TUNING in their environment, as the container image sets it. */
  malloc: 'tuned' | 'default';
  tx: number;
  rssRows: number[];
  repeats: number;
  profile: boolean;
  out: string;
  /** Worker-thread counts of the page-work model to run beside the exporter (bench/page-work-model.ts). */
  modelWorkers: number[];
  /** Bandwidth of the WAN part's link, Mbit/s. */
  wanMbps: number;
  /** Whether the page server compresses when asked (cdn) or never (identity), in every part but WAN. */
  serverEncoding: 'cdn' | 'identity';
  /** Unit-windows of the scale part's generated states, and the wallets of its job (bench/scale.ts). */
  scaleWindows: number[];
  scaleWallets: number;
  scaleStores: string[];
  /** `run --workers` counts of the workers part (bench/workers.ts). */
  workers: number[];
  /** Sandbox transactions of the paging part (issue 33 goal 3). */
  pagingTx: number;
  scaleLayout: 'manifests' | 'markers';
}

function scaleLayout(text: string): Options['scaleLayout'] {
  if (text !== 'manifests' && text !== 'markers') throw new Error(`--scale-layout is manifests or markers, not ${text}`);
  return text;
}

function parseOptions(argv: string[]): Options {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const parts = ['throughput', 'rss', 'latency', 'ratelimit', 'wan', 'startup', 'scale', 'workers', 'paging'];
  return {
    only: new Set(get('only')?.split(',') ?? parts),
    formats: get('formats')?.split(',') ?? ['duckdb', 'hyparquet', 'ndjson'],
    ...(get('units-in-flight') ? { unitsInFlight: Number(get('units-in-flight')) } : {}),
    chunk: get('chunk') ?? '1d',
    ...(get('batch-windows') === 'on' || get('batch-windows') === 'off' ? { batchWindows: get('batch-windows') as 'on' | 'off' } : {}),
    nodeFlags: get('node-flags')?.split(' ').filter(Boolean) ?? [],
    malloc: get('malloc') === 'default' ? 'default' : 'tuned',
    tx: Number(get('tx') ?? 1_000_000),
    rssRows: (get('rss-rows') ?? '1000000,5000000').split(',').map(Number),
    repeats: Number(get('repeats') ?? 3),
    profile: argv.includes('--profile'),
    out: get('out') ?? join(REPO, 'bench/RESULTS.md'),
    modelWorkers: get('model-workers')?.split(',').map(Number) ?? [],
    wanMbps: Number(get('wan-mbps') ?? 50),
    serverEncoding: get('server-encoding') === 'identity' ? 'identity' : 'cdn',
    scaleWindows: (get('scale-windows') ?? '10000,100000,1000000').split(',').map(Number),
    scaleWallets: Number(get('scale-wallets') ?? 100),
    scaleStores: (get('scale-stores') ?? 'local').split(','),
    workers: (get('workers') ?? '1,2,4').split(',').map(Number),
    pagingTx: Number(get('paging-tx') ?? 200_000),
    scaleLayout: scaleLayout(get('scale-layout') ?? 'manifests'),
  };
}

/** Markdown sections, printed as they are produced and written to RESULTS.md at the end. */
const sections: string[] = [];
function emit(text: string): void {
  sections.push(text);
  console.log(text);
}

interface Format {
  key: string;
  label: string;
  format: 'parquet' | 'ndjson' | 'iceberg';
  engine?: 'duckdb' | 'hyparquet';
  /** Committed through the sandbox's Iceberg REST catalog, served by this process. */
  catalog?: boolean;
}
const ALL_FORMATS: Format[] = [
  { key: 'duckdb', label: 'Parquet, DuckDB engine (default)', format: 'parquet', engine: 'duckdb' },
  { key: 'hyparquet', label: 'Parquet, hyparquet engine', format: 'parquet', engine: 'hyparquet' },
  { key: 'ndjson', label: 'NDJSON.gz', format: 'ndjson' },
  // Only when asked (--formats ...,iceberg): DuckDB Parquet with field ids, then the table commit.
  { key: 'iceberg', label: 'Iceberg (DuckDB Parquet, table commit)', format: 'iceberg' },
  // Only when asked (--formats ...,iceberg-catalog): the same, committed through a REST catalog.
  { key: 'iceberg-catalog', label: "Iceberg through a REST catalog (the sandbox's at /iceberg)", format: 'iceberg', catalog: true },
];
let FORMATS = ALL_FORMATS;
let UNITS: number | undefined;
let NODE_FLAGS: string[] = [];
let CHILD_ENV: NodeJS.ProcessEnv = process.env;
/** Issue 17's goals for the default Parquet engine and NDJSON.gz: CPU per row against the limit's, and the aim for rows/s. */
const CPU_GOALS = new Set(['Parquet, DuckDB engine (default)', 'NDJSON.gz']);
const MAX_CPU_PER_ROW_RATIO = 2.5;
const AIM_ROWS_RATIO = 0.5;
/** Issue 33 goal 2: data files per 1,000,000 rows, where the partitioning allows so few. */
const MAX_FILES_PER_MILLION_ROWS = 20;
/** Bytes on the wire per row at most this share of the uncompressed JSON. */
const MAX_WIRE_SHARE = 0.25;

/** One goal of an issue with its figure, listed again at the end of the results. */
interface Goal {
  goal: string;
  measured: string;
  met: boolean;
}
const goals: Goal[] = [];
function goal(text: string, measured: string, met: boolean): string {
  goals.push({ goal: text, measured, met });
  return met ? 'met' : 'NOT met';
}
const CHAINS = [1, 8453, 42161];
const FROM = '2024-02-01';

/** Part 1: rows/s of the exporter against the bare fetch-and-parse rate, same pages, same concurrency. */
async function throughput(opts: Options): Promise<void> {
  const server = await startPageServer(opts.tx, 8192);
  // The sandbox's REST catalog (a sandbox of 300 transactions, the fewest: only its /iceberg is used), in this process.
  const catalog = FORMATS.some((f) => f.catalog)
    ? await (await import('@insight-export/sandbox')).startSandbox({ transactions: 300 })
    : undefined;
  try {
    const base = {
      kind: 'export' as const,
      baseUrl: server.url,
      wallet: server.wallet,
      chains: CHAINS,
      from: FROM,
      to: server.rangeEnd,
      chunk: opts.chunk,
      ...(opts.batchWindows ? { batchWindows: opts.batchWindows } : {}),
    };
    // Warm-up: renders every page once into the server's cache and records the requests of a run.
    await server.get('/_bench/reset');
    const warm = await inChild({ ...base, label: 'warm-up', format: 'ndjson', compression: 'none' }, false);
    const paths = await server.get<string[]>('/_bench/log');
    const work = mkdtempSync(join(tmpdir(), 'insight-bench-paths-'));
    const pathsFile = join(work, 'paths.json');
    writeFileSync(pathsFile, JSON.stringify(paths));
    const concurrency = 8; // requests_in_flight default (src/config/resolve.ts)
    const limitSpec: LimitSpec = {
      kind: 'limit',
      label: 'limit: bare client, JSON.parse only',
      origin: server.origin,
      pathsFile,
      concurrency,
    };

    const results = new Map<string, ChildResult[]>();
    const ratios = new Map<string, number[]>();
    const cpuRatios = new Map<string, number[]>();
    const sent = new Map<string, number[]>();
    /** The page server's own work in each run: CPU s, and requests its cache lacked. */
    const serverWork = new Map<string, { cpuSec: number; misses: number }[]>();
    const keepServerWork = (label: string, st: PageServerStats) =>
      serverWork.set(label, [...(serverWork.get(label) ?? []), { cpuSec: st.cpuMs / 1000, misses: st.misses }]);
    /** Server bytes of the exporter runs: as sent and uncompressed. */
    const wire = { bytes: 0, identityBytes: 0, rows: 0 };
    let misses = 0;
    /** Keeps a run with its ratio to the limit of the same repetition, and prints it. */
    const keep = (res: ChildResult, limit: ChildResult, r: number) => {
      results.set(res.label, [...(results.get(res.label) ?? []), res]);
      ratios.set(res.label, [...(ratios.get(res.label) ?? []), res.rowsPerSec / limit.rowsPerSec]);
      cpuRatios.set(res.label, [...(cpuRatios.get(res.label) ?? []), res.cpuSec / res.rows / (limit.cpuSec / limit.rows)]);
      console.error(
        `  [${r + 1}/${opts.repeats}] ${res.label}: ${fmt(res.rowsPerSec)} rows/s, ratio ${(res.rowsPerSec / limit.rowsPerSec).toFixed(2)}, ` +
          `CPU per row ${(res.cpuSec / res.rows / (limit.cpuSec / limit.rows)).toFixed(2)}x the limit's, peak RSS ${res.peakRssMB} MB`,
      );
    };
    for (let r = 0; r < opts.repeats; r++) {
      await server.get('/_bench/reset');
      const limit = await inChild(limitSpec, false);
      const limitStats = await server.get<PageServerStats>('/_bench/stats');
      misses += limitStats.misses;
      keepServerWork(limitSpec.label, limitStats);
      results.set(limit.label, [...(results.get(limit.label) ?? []), limit]);
      console.error(`  [${r + 1}/${opts.repeats}] ${limit.label}: ${fmt(limit.rowsPerSec)} rows/s (load ${load()})`);
      for (const f of FORMATS) {
        await server.get('/_bench/reset');
        const res = await inChild(
          {
            ...base,
            label: f.label,
            format: f.format,
            ...(f.engine ? { engine: f.engine } : {}),
            ...(f.catalog && catalog ? { catalogUri: catalog.catalog.url, catalogNamespace: `throughput_${r}` } : {}),
          },
          opts.profile && r === 0,
        );
        const stats = await server.get<PageServerStats>('/_bench/stats');
        misses += stats.misses;
        keepServerWork(f.label, stats);
        sent.set(f.label, [...(sent.get(f.label) ?? []), stats.requests]);
        wire.bytes += stats.bytes;
        wire.identityBytes += stats.identityBytes;
        wire.rows += res.rows;
        keep(res, limit, r);
      }
      for (const workers of opts.modelWorkers) {
        const label =
          workers === 0
            ? 'model: NDJSON.gz page work on the main thread'
            : `model: NDJSON.gz page work in ${workers} worker thread${workers > 1 ? 's' : ''}`;
        keep(
          await inChild({ kind: 'model', label, origin: server.origin, pathsFile, concurrency, wallet: server.wallet, workers }, false),
          limit,
          r,
        );
      }
    }
    rmSync(work, { recursive: true, force: true });

    const lines = [
      `## 1. Throughput against the limit`,
      '',
      `Wallet ${server.wallet} (${fmt(warm.rows)} rows) on chains ${CHAINS.join(', ')}, ${FROM} to ${server.rangeEnd}, windows of ${opts.chunk}` +
        `${opts.batchWindows ? ` (batch_windows ${opts.batchWindows})` : ''}, ` +
        `${paths.length} requests of up to 1000 rows per chain; sandbox of ${fmt(opts.tx)} transactions served from memory by a separate process ` +
        `(cache misses during measured runs: ${misses}; see "server" below). ` +
        `Exporter defaults: requests_in_flight 8, units_in_flight 4, page size 1000, pages ahead decided by the run's request pool. ` +
        `${opts.repeats} interleaved repetitions; median and range. requests = answered by the server in the run.`,
      '',
      `CPU per row = CPU s / rows of the run against the limit's of the same repetition (goal ≤ ${MAX_CPU_PER_ROW_RATIO}x for the default Parquet engine and NDJSON.gz; aim for rows/s ≥ ${AIM_ROWS_RATIO} of the limit). ` +
        `The server answers like a CDN (brotli when asked; the exporter's client and the limit both ask, as fetch() would).`,
      '',
      '| run | rows/s (median) | range | ratio to limit (median) | CPU s | CPU per row vs limit (median) | goal | peak RSS MB | requests | requests per 1,000 rows | data files (per 1,000,000 rows) | server: CPU s, cache misses |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ];
    for (const [label, rs] of results) {
      const rowsPerSec = rs.map((x) => x.rowsPerSec);
      const ratio = ratios.get(label);
      const cpuRatio = cpuRatios.get(label);
      const requests = sent.get(label)?.[0] ?? rs[0]!.requests;
      let verdict = '';
      if (CPU_GOALS.has(label) && ratio && cpuRatio) {
        const cpuMet = goal(
          `${label}: CPU per row ≤ ${MAX_CPU_PER_ROW_RATIO}x the limit's`,
          `${median(cpuRatio).toFixed(2)}x`,
          median(cpuRatio) <= MAX_CPU_PER_ROW_RATIO,
        );
        const rowsMet = goal(
          `${label}: rows/s ≥ ${AIM_ROWS_RATIO} of the limit (aim)`,
          median(ratio).toFixed(2),
          median(ratio) >= AIM_ROWS_RATIO,
        );
        verdict = `CPU ≤ ${MAX_CPU_PER_ROW_RATIO}x ${cpuMet}; rows/s ≥ ${AIM_ROWS_RATIO} ${rowsMet}`;
      }
      const files = rs[0]!.files;
      if (files !== undefined && rs[0]!.partitions !== undefined && label === 'Parquet, DuckDB engine (default)') {
        // One file per partition holding rows is the fewest the partitioning allows.
        const allowed = Math.max(Math.ceil((MAX_FILES_PER_MILLION_ROWS * rs[0]!.rows) / 1e6), rs[0]!.partitions);
        goal(
          `issue 33 goal 2: data files ≤ ${MAX_FILES_PER_MILLION_ROWS} per 1,000,000 rows where the partitioning allows (windows of ${opts.chunk})`,
          `${fmt(files)} files for ${fmt(rs[0]!.rows)} rows in ${rs[0]!.partitions} partitions`,
          files <= allowed,
        );
      }
      lines.push(
        `| ${label} | ${fmt(median(rowsPerSec))} | ${fmt(Math.min(...rowsPerSec))}–${fmt(Math.max(...rowsPerSec))} | ` +
          `${ratio ? `${median(ratio).toFixed(2)} (${spread(ratio, 2)})` : '1'} | ${median(rs.map((x) => x.cpuSec)).toFixed(2)} | ` +
          `${cpuRatio ? `${median(cpuRatio).toFixed(2)}x (${spread(cpuRatio, 2)})` : '1'} | ${verdict} | ` +
          `${median(rs.map((x) => x.peakRssMB))} | ${requests} | ${((requests / rs[0]!.rows) * 1000).toFixed(2)} | ` +
          `${rs[0]!.files === undefined ? '' : `${fmt(rs[0]!.files)} (${((rs[0]!.files / rs[0]!.rows) * 1e6).toFixed(0)})`} | ${serverCell(serverWork.get(label))} |`,
      );
    }
    lines.push(
      '',
      `Server: the page server's CPU in the run (it shares these ${cpus().length} cores) and the requests its cache lacked, median. ` +
        `The limit replays the warm-up's requests, all cached; the exporter's slices are cut where the densities it learns put them, ` +
        `which vary with timing, so most of its requests are new to the server, rendered by the sandbox and compressed while it runs.`,
    );
    const wirePerRow = wire.bytes / wire.rows;
    const identityPerRow = wire.identityBytes / wire.rows;
    const share = wirePerRow / identityPerRow;
    lines.push(
      '',
      `Bytes on the wire per row (the exporter runs above): ${wirePerRow.toFixed(0)} compressed against ${identityPerRow.toFixed(0)} as uncompressed JSON (what the client received before it asked for compression): ` +
        `${share.toFixed(3)} (goal ≤ ${MAX_WIRE_SHARE}: ${goal(`bytes on the wire per row ≤ ${MAX_WIRE_SHARE} of uncompressed`, `${wirePerRow.toFixed(0)} / ${identityPerRow.toFixed(0)} bytes = ${share.toFixed(3)}`, share <= MAX_WIRE_SHARE)}).`,
    );
    emit(lines.join('\n'));
  } finally {
    await server.stop();
    await catalog?.close();
  }
}

/** Part 2: peak RSS of the exporter for ~1M and ~5M wallet rows (memory must not grow with the range). */
async function rss(opts: Options): Promise<void> {
  const lines = [
    `## 2. Peak RSS against the range`,
    '',
    'The hot wallet of a sandbox sized for the wanted row count (it holds ~32% of all transactions), every chain, 1-day windows, defaults otherwise. ' +
      'Pages rendered on demand by the server process (no cache: 5M rows of JSON would not fit), so rows/s here is not a throughput figure. ' +
      'Peak RSS = getrusage maxrss of the exporter process (JS heap, native DuckDB memory, buffers).',
    '',
    '| output | wallet rows | windows | rows/s | CPU s | peak RSS MB |',
    '|---|---|---|---|---|---|',
  ];
  const peaks = new Map<string, number[]>();
  for (const rows of opts.rssRows) {
    const server = await startPageServer(Math.round(rows / 0.3227), 0);
    try {
      for (const f of FORMATS) {
        const res = await inChild(
          {
            kind: 'export',
            label: f.label,
            baseUrl: server.url,
            wallet: server.wallet,
            chains: CHAINS,
            from: FROM,
            to: server.rangeEnd,
            chunk: '1d',
            format: f.format,
            ...(f.engine ? { engine: f.engine } : {}),
          },
          false,
        );
        peaks.set(f.label, [...(peaks.get(f.label) ?? []), res.peakRssMB]);
        const days = Math.round((Date.parse(server.rangeEnd) - Date.parse(FROM)) / 86_400_000);
        lines.push(`| ${f.label} | ${fmt(res.rows)} | ${days} days | ${fmt(res.rowsPerSec)} | ${res.cpuSec} | ${res.peakRssMB} |`);
        console.error(
          `  ${f.label} ${fmt(res.rows)} rows: peak RSS ${res.peakRssMB} MB, ${fmt(res.rowsPerSec)} rows/s, at peak ${JSON.stringify(res.memoryAtPeak)}`,
        );
      }
    } finally {
      await server.stop();
    }
  }
  lines.push('');
  for (const [label, ps] of peaks) {
    if (ps.length < 2) continue;
    const growth = ps[ps.length - 1]! / ps[0]! - 1;
    const last = ps[ps.length - 1]!;
    const met = goal(
      `${label}: peak RSS ≤ 400 MB at ${fmt(opts.rssRows[opts.rssRows.length - 1]!)} rows, ≤ 10% above ${fmt(opts.rssRows[0]!)}`,
      `${ps.join(' → ')} MB (${(growth * 100).toFixed(1)}%)`,
      last <= 400 && growth <= 0.1,
    );
    lines.push(`- ${label}: ${ps.join(' → ')} MB, growth ${(growth * 100).toFixed(1)}% (goal ≤ 400 MB and ≤ 10%: ${met})`);
  }
  emit(lines.join('\n'));
}

/** Part 3: latency hiding with 150 ms per request and 100-row pages. */
async function latency(opts: Options): Promise<void> {
  const server = await startPageServer(opts.tx, 8192);
  const latencyMs = 150;
  const pageSize = 100;
  const concurrency = 8;
  try {
    const base = {
      kind: 'export' as const,
      baseUrl: server.url,
      wallet: server.wallet,
      chains: [1],
      from: FROM,
      to: server.rangeEnd,
      chunk: '1d',
      pageSize,
    };
    // Warm the cache without latency, so the measured run never waits for rendering.
    await server.get('/_bench/reset');
    await inChild({ ...base, label: 'warm-up', format: 'ndjson', compression: 'none' }, false);
    const work = mkdtempSync(join(tmpdir(), 'insight-bench-paths-'));
    const pathsFile = join(work, 'paths.json');
    writeFileSync(pathsFile, JSON.stringify(await server.get<string[]>('/_bench/log')));
    await server.get(`/_bench/settings?latency_ms=${latencyMs}`);
    const bound = (concurrency / (latencyMs / 1000)) * pageSize;
    const lines = [
      `## 3. Latency hiding`,
      '',
      `${latencyMs} ms from the arrival of every request to its answer (the server makes the page meanwhile, so a page its cache lacks takes no longer), pages of ${pageSize} rows, chain 1 only (${fmt(server.walletRowsByChain['1'] ?? 0)} rows, 1-day windows), ` +
        `requests_in_flight ${concurrency}: bound = ${concurrency} / ${latencyMs / 1000} s x ${pageSize} rows = ${fmt(bound)} rows/s.`,
      '',
      '| output | rows/s | fraction of bound | requests | mean requests in flight (server) | paging s / run s | target |',
      '|---|---|---|---|---|---|---|',
    ];
    const runs: [string, () => Promise<ChildResult>][] = [
      [
        'limit: bare client, same requests',
        () => inChild({ kind: 'limit', label: 'limit', origin: server.origin, pathsFile, concurrency }, false),
      ],
      ...FORMATS.slice(0, 1).map((f): [string, () => Promise<ChildResult>] => [
        f.label,
        () => inChild({ ...base, label: `latency ${f.label}`, format: f.format, ...(f.engine ? { engine: f.engine } : {}) }, opts.profile),
      ]),
    ];
    for (const [label, run] of runs) {
      await server.get('/_bench/reset');
      const res = await run();
      const f = { label };
      console.error(`  ${label}: ${JSON.stringify(res)}`);
      const stats = await server.get<PageServerStats>('/_bench/stats');
      const span = stats.last200! - stats.firstRequest!;
      const fraction = res.rowsPerSec / bound;
      lines.push(
        `| ${f.label} | ${fmt(res.rowsPerSec)} | ${fraction.toFixed(2)} | ${res.requests} | ${(stats.inFlightMs / span).toFixed(2)}${res.meanClientInFlight === undefined ? '' : ` (client: ${res.meanClientInFlight})`} | ` +
          `${(span / 1000).toFixed(1)} / ${res.seconds} | ≥ 0.90 ${label.startsWith('limit') ? (fraction >= 0.9 ? 'met' : 'NOT met') : goal(`latency hiding (${label}) ≥ 0.9 of the bound`, fraction.toFixed(2), fraction >= 0.9)} |`,
      );
      console.error(`  latency: ${fmt(res.rowsPerSec)} rows/s = ${fraction.toFixed(2)} of ${fmt(bound)}`);
    }
    emit(lines.join('\n'));
    rmSync(work, { recursive: true, force: true });
  } finally {
    await server.stop();
  }
}

/**
 * Part 5: a WAN link. Every request waits WAN_LATENCY_MS, then every answer crosses one link of
 * opts.wanMbps shared by all of them. What the link allows, in rows/s: the lower of its bandwidth
 * over the bytes per row of the run's requests as the bare client receives them, and
 * requests_in_flight x rows per page / latency.
 */
async function wan(opts: Options): Promise<void> {
  const server = await startPageServer(opts.tx, 8192);
  const latencyMs = 80;
  const concurrency = 8;
  try {
    const base = {
      kind: 'export' as const,
      baseUrl: server.url,
      wallet: server.wallet,
      chains: [1],
      from: FROM,
      to: server.rangeEnd,
      chunk: '1d',
    };
    await server.get('/_bench/reset');
    await inChild({ ...base, label: 'warm-up', format: 'ndjson', compression: 'none' }, false);
    const work = mkdtempSync(join(tmpdir(), 'insight-bench-paths-'));
    const pathsFile = join(work, 'paths.json');
    const paths = await server.get<string[]>('/_bench/log');
    writeFileSync(pathsFile, JSON.stringify(paths));
    const lines = [
      `## 5. WAN: latency and a bandwidth cap`,
      '',
      `${latencyMs} ms from the arrival of every request to its answer (the page made meanwhile), then one link of ${opts.wanMbps} Mbit/s shared by every answer; pages of 1000 rows, chain 1 only ` +
        `(${fmt(server.walletRowsByChain['1'] ?? 0)} rows, 1-day windows, ${paths.length} requests), requests_in_flight ${concurrency}. ` +
        `The link allows the lower of ${opts.wanMbps} Mbit/s over the bytes per row the bare client receives for these requests, and ${concurrency} x rows per page / ${latencyMs} ms.`,
      '',
      '| run | server answers | rows/s | bytes on the wire per row | the link allows, rows/s | fraction | goal |',
      '|---|---|---|---|---|---|---|',
    ];
    const runs: { label: string; encoding: 'cdn' | 'identity'; spec: ChildSpec; goal: boolean }[] = [
      {
        label: 'limit: bare client, same requests',
        encoding: 'cdn',
        spec: { kind: 'limit', label: 'limit', origin: server.origin, pathsFile, concurrency },
        goal: false,
      },
      {
        label: FORMATS[0]!.label,
        encoding: 'cdn',
        spec: {
          ...base,
          label: `wan ${FORMATS[0]!.label}`,
          format: FORMATS[0]!.format,
          ...(FORMATS[0]!.engine ? { engine: FORMATS[0]!.engine } : {}),
        },
        goal: true,
      },
      {
        label: `${FORMATS[0]!.label}, server never compressing (as before compression)`,
        encoding: 'identity',
        spec: {
          ...base,
          label: `wan identity ${FORMATS[0]!.label}`,
          format: FORMATS[0]!.format,
          ...(FORMATS[0]!.engine ? { engine: FORMATS[0]!.engine } : {}),
        },
        goal: false,
      },
    ];
    /** Bytes per row the bare client received, by server encoding (the first run of each). */
    const limitBytesPerRow = new Map<string, number>();
    for (const run of runs) {
      await server.get(`/_bench/settings?latency_ms=0&bandwidth_mbps=0&encoding=${run.encoding}`);
      if (!limitBytesPerRow.has(run.encoding)) {
        // The bytes per row of these requests in this encoding, without the link (fast).
        await inChild({ kind: 'limit', label: 'limit bytes', origin: server.origin, pathsFile, concurrency }, false);
        const s = await server.get<PageServerStats>('/_bench/stats');
        limitBytesPerRow.set(run.encoding, s.bytes / (server.walletRowsByChain['1'] ?? 1));
      }
      await server.get(`/_bench/settings?latency_ms=${latencyMs}&bandwidth_mbps=${opts.wanMbps}&encoding=${run.encoding}`);
      const res = await inChild(run.spec, false);
      const stats = await server.get<PageServerStats>('/_bench/stats');
      const perRow = limitBytesPerRow.get(run.encoding)!;
      const allows = Math.min((opts.wanMbps * 1e6) / 8 / perRow, (concurrency * 1000) / (latencyMs / 1000));
      const fraction = res.rowsPerSec / allows;
      const verdict = run.goal
        ? `≥ 0.90 ${goal(`WAN (${latencyMs} ms, ${opts.wanMbps} Mbit/s): ${run.label} ≥ 0.9 of what the link allows`, fraction.toFixed(2), fraction >= 0.9)}`
        : '';
      lines.push(
        `| ${run.label} | ${run.encoding === 'cdn' ? 'compressed when asked' : 'uncompressed'} | ${fmt(res.rowsPerSec)} | ${(stats.bytes / res.rows).toFixed(0)} | ${fmt(allows)} | ${fraction.toFixed(2)} | ${verdict} |`,
      );
      console.error(
        `  wan ${run.label}: ${fmt(res.rowsPerSec)} rows/s = ${fraction.toFixed(2)} of ${fmt(allows)} (${(stats.bytes / res.rows).toFixed(0)} bytes per row)`,
      );
    }
    await server.get('/_bench/settings?latency_ms=0&bandwidth_mbps=0&encoding=cdn');
    emit(lines.join('\n'));
    rmSync(work, { recursive: true, force: true });
  } finally {
    await server.stop();
  }
}

/** Part 4: a server that allows 20 requests/s (429 + Retry-After: 1 beyond it). */
async function rateLimit(opts: Options): Promise<void> {
  const server = await startPageServer(opts.tx, 8192);
  const rps = 20;
  const pageSize = 100;
  try {
    // About 40 s of requests at the limit: the first days of chain 1 in 100-row pages.
    const days = 3;
    const to = new Date(Date.parse(FROM) + days * 86_400_000).toISOString().slice(0, 10);
    const base = {
      kind: 'export' as const,
      baseUrl: server.url,
      wallet: server.wallet,
      chains: [1],
      from: FROM,
      to,
      chunk: '1d',
      pageSize,
    };
    await inChild({ ...base, label: 'warm-up', format: 'ndjson', compression: 'none' }, false);
    await server.get(`/_bench/settings?rps=${rps}&retry_after=1`);
    await new Promise((r) => setTimeout(r, 1500)); // let the server's bucket fill
    await server.get('/_bench/reset');
    const res = await inChild({ ...base, label: FORMATS[0]!.label, format: 'parquet', engine: 'duckdb', requestsPerSecond: rps }, false);
    const stats = await server.get<PageServerStats>('/_bench/stats');
    const ok = stats.byStatus['200'] ?? 0;
    const limited = stats.byStatus['429'] ?? 0;
    const span = (stats.last200! - stats.first200!) / 1000;
    const achieved = (ok - 1) / span;
    const share429 = limited / stats.requests;
    emit(
      [
        `## 4. Rate limit`,
        '',
        `Server allows ${rps} requests/s (token bucket, burst ${rps}; beyond it 429 with Retry-After: 1); exporter with requests_per_second ${rps}, ` +
          `pages of ${pageSize} rows, chain 1, ${FROM} to ${to}. Achieved = answers 200 per second between the first and the last one (server clock).`,
        '',
        '| requests | answered 200 | answered 429 | share 429 | seconds | achieved requests/s | of allowed | exporter wall s | targets |',
        '|---|---|---|---|---|---|---|---|---|',
        `| ${stats.requests} | ${ok} | ${limited} | ${(share429 * 100).toFixed(2)}% | ${span.toFixed(1)} | ${achieved.toFixed(2)} | ${(achieved / rps).toFixed(3)} | ${res.seconds} | ` +
          `≥ 0.95 of allowed ${goal('rate limit: ≥ 0.95 of the allowed rate', (achieved / rps).toFixed(3), achieved / rps >= 0.95)}; ` +
          `≤ 1% 429 ${goal('rate limit: ≤ 1% 429', `${(share429 * 100).toFixed(2)}%`, share429 <= 0.01)} |`,
      ].join('\n'),
    );
  } finally {
    await server.stop();
  }
}

const MAX_VERSION_S = 0.3;
const MAX_COMPLETE_RUN_S = 1;

/** Part 6: the built CLI's start, cold processes (bench/startup.ts after `npm run build`). */
async function startup(): Promise<void> {
  const run = (cmd: string, args: string[]) =>
    new Promise<string>((done, fail) =>
      execFile(cmd, args, { cwd: REPO, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
        err ? fail(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : done(stdout),
      ),
    );
  await run('npm', ['run', '--silent', 'build']);
  const out = await run(process.execPath, ['--import', 'tsx', join(REPO, 'bench/startup.ts')]);
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
    runs: number;
    version: { median_s: number; runs_s: number[] };
    complete_run: { median_s: number; runs_s: number[] };
  };
  emit(
    [
      '## 6. CLI start',
      '',
      `\`npm run build\`, then \`bench/startup.ts\`: the bundled bin (dist/bin/cli.js) in cold processes, median of ${r.runs}; the complete run is ` +
        '`run jobs/demo.yaml` into a destination the demo already completed, against a sandbox server in another process.',
      '',
      '| command | median s | runs s | goal |',
      '|---|---|---|---|',
      `| \`--version\` | ${r.version.median_s} | ${r.version.runs_s.join(', ')} | ≤ ${MAX_VERSION_S} s ${goal(`CLI start: \`--version\` ≤ ${MAX_VERSION_S} s`, `${r.version.median_s} s`, r.version.median_s <= MAX_VERSION_S)} |`,
      `| run of a complete job | ${r.complete_run.median_s} | ${r.complete_run.runs_s.join(', ')} | ≤ ${MAX_COMPLETE_RUN_S} s ${goal(`CLI start: a run of a complete job ≤ ${MAX_COMPLETE_RUN_S} s`, `${r.complete_run.median_s} s`, r.complete_run.median_s <= MAX_COMPLETE_RUN_S)} |`,
    ].join('\n'),
  );
}

/** Issue 33 goal 3: page requests against the floor on the contract profile, exact rows on the indexer and hostile ones. */
const MAX_FLOOR_RATIO = 1.25;

/** Part 9: page requests against the floor (bench/paging-requests.ts), every row read back. */
async function paging(opts: Options): Promise<void> {
  // Loaded here: every child of this module runs its bundle, and none needs the sandbox.
  const { measurePaging, pagingTable, FLOOR_DEFINITION } = await import('./paging-requests.js');
  const { buildSandboxData } = await import('@insight-export/sandbox');
  const data = buildSandboxData({ seed: 42, transactions: opts.pagingTx });
  const results = [];
  for (const profile of ['contract', 'indexer', 'hostile'] as const) {
    const r = await measurePaging({ profile, transactions: opts.pagingTx, data, check: true });
    const c = r.check;
    const exact = c !== undefined && c.missing_ids + c.duplicates + c.unknown_ids + c.fields_differing === 0;
    if (profile === 'contract')
      goal(`issue 33 goal 3: page requests ≤ ${MAX_FLOOR_RATIO}x the floor (contract profile)`, `${r.ratio}x`, r.ratio <= MAX_FLOOR_RATIO);
    goal(`issue 33 goal 3: every row exact under the ${profile} profile`, exact ? 'exact' : JSON.stringify(c), exact);
    results.push(r);
  }
  emit(
    [
      '## 9. Paging: page requests against the floor (issue 33 goal 3)',
      '',
      `\`bench/paging-requests.ts\`'s measurement, in this process: the bench wallet's job against a sandbox of ${fmt(opts.pagingTx)} transactions per profile, every row read back.`,
      '',
      pagingTable(results),
      '',
      FLOOR_DEFINITION,
    ].join('\n'),
  );
}

/** Part 8: `run --workers N`, rows/s and CPU per row of the CLI and its workers (bench/workers.ts). */
async function workers(opts: Options): Promise<void> {
  const server = await startPageServer(opts.tx, 8192);
  try {
    await workersBench({
      repo: REPO,
      baseUrl: server.url,
      wallet: server.wallet,
      chains: CHAINS,
      from: FROM,
      to: server.rangeEnd,
      counts: opts.workers,
      repeats: opts.repeats,
      env: CHILD_ENV,
      emit,
      goal,
    });
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (servePageWorkIfWorker()) return;
  if (argv[0] === '--child') {
    const spec = JSON.parse(argv[1]!) as ChildSpec;
    const result =
      spec.kind === 'limit'
        ? await childLimit(spec)
        : spec.kind === 'model'
          ? await childModel(spec)
          : spec.kind === 'cli'
            ? await childCli(spec)
            : await childExport(spec);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const opts = parseOptions(argv);
  UNITS = opts.unitsInFlight;
  SERVER_ENCODING = opts.serverEncoding;
  NODE_FLAGS = opts.nodeFlags;
  CHILD_ENV = opts.malloc === 'tuned' ? { ...process.env, ...MALLOC_TUNING } : process.env;
  FORMATS = ALL_FORMATS.filter((f) => opts.formats.includes(f.key));
  const removeBundle = await bundleSelf();
  const started = new Date();
  const loadBefore = load();
  const t0 = performance.now();
  try {
    if (opts.only.has('throughput')) await throughput(opts);
    if (opts.only.has('rss')) await rss(opts);
    if (opts.only.has('latency')) await latency(opts);
    if (opts.only.has('ratelimit')) await rateLimit(opts);
    if (opts.only.has('wan')) await wan(opts);
    if (opts.only.has('startup')) await startup();
    if (opts.only.has('scale'))
      await scale(
        {
          windows: opts.scaleWindows,
          wallets: opts.scaleWallets,
          stores: opts.scaleStores,
          layout: opts.scaleLayout,
          profile: opts.profile,
        },
        { inChild: (spec, p) => inChild(spec, p), emit, goal },
      );
    if (opts.only.has('workers')) await workers(opts);
    if (opts.only.has('paging')) await paging(opts);
    if (goals.length > 0) {
      emit(
        [
          '## Goals in this run (issue 17, and issue 33 where named)',
          '',
          '| goal | measured | |',
          '|---|---|---|',
          ...goals.map((g) => `| ${g.goal} | ${g.measured} | ${g.met ? 'met' : 'NOT met'} |`),
        ].join('\n'),
      );
    }
  } finally {
    removeBundle();
  }
  const header = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}\` (bench/run.ts) on ${started.toISOString()}, ${((performance.now() - t0) / 60_000).toFixed(1)} min.`,
    '',
    `- Machine: ${machine()}`,
    `- Exporter processes: ${
      opts.malloc === 'tuned'
        ? `${Object.entries(MALLOC_TUNING)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')} in their environment, as the container image sets them (src/run/malloc-tuning.ts)`
        : "the inherited environment, without the container image's malloc settings (--malloc default)"
    }${NODE_FLAGS.length > 0 ? `; node flags ${NODE_FLAGS.join(' ')}` : ''}`,
    `- Page server: ${opts.serverEncoding === 'cdn' ? 'answers compressed when asked, as a CDN does (brotli quality 4, else gzip 6)' : 'never compresses (--server-encoding identity)'}`,
    `- Load average (1/5/15 min) before: ${loadBefore}; after: ${load()} (other processes share these cores: wall-clock figures are noisy, ratios within one repetition less so)`,
    '',
  ].join('\n');
  let text = `${header}\n${sections.join('\n\n')}\n`;
  if (opts.out !== '-') {
    // The hand-written analysis below NOTES_MARKER survives a new run.
    const previous = existsSync(opts.out) ? readFileSync(opts.out, 'utf8') : '';
    const at = previous.indexOf(NOTES_MARKER);
    if (at >= 0) text += `\n${previous.slice(at)}`;
    writeFileSync(opts.out, text);
  }
}

await main();
