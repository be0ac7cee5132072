/**
 * The "scale" part of the bench (`npm run bench -- --only scale --scale-windows 10000,100000`):
 * what a job with many unit-windows costs once its export is complete (issue 33, goal 1: state
 * that scales with units, not windows).
 *
 * For each size, a destination's state is generated, without rows: every window's `WindowRecord`
 * as `WindowState.commit` writes it (with the window's edge block where the sandbox has one, as a
 * run records it), in one of two layouts (`--scale-layout`): `manifests` (today's: one manifest
 * and one record segment per unit, as a run's fold leaves them, src/state/stream-manifest.ts) or
 * `markers` (one completed marker per window, the layout of older versions, which the first run
 * folds). The job is shaped like a real back-fill: wallets x chains x daily windows, ending inside
 * the sandbox's data, so the range is complete. The days before the sandbox's first block are
 * windows without rows and without files (as a back-fill over years before a wallet's first
 * transaction has); a window inside the sandbox's data lists one data file, an empty placeholder
 * at the key the sink would give it. Files are written directly and in parallel (a local store's
 * keys are paths below its root), not through the commit protocol.
 *
 * Then, each in a fresh process running the CLI's own entry (src/cli.ts main): `run` of the
 * complete job twice (the first also writes what a run keeps beside the state: lease, partition
 * claims, reorganisation check records; the second is the cron re-run measured), `plan`, and
 * `verify --quick` (state and listing, file sizes, no row contents). Requests are counted by the
 * sandbox (its own process's server, the parent of the measured children).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { main as cliMain } from '../src/cli.js';
import { loadJob } from '../src/job/index.js';
import { cutOnGrid, windowKey } from '../src/plan/index.js';
import { jobStreams } from '../src/plan/streams.js';
import type { Sandbox } from '@insight-export/sandbox';
import type { ChildResult } from './run.js';
import { DEFAULT_PARTITIONING, renderPartition } from '../src/sink/partitioning.js';
import { LocalStore } from '../src/store/local.js';
import { openStore } from '../src/store/open-store.js';
import { WindowState, type BlockEdge, type WindowRecord } from '../src/state/window-state.js';
import { encodeWindows, type Segment, type StreamManifest } from '../src/state/stream-manifest.js';

/** A command of the CLI run in a child process (bench/run.ts `--child`). */
export interface CliSpec {
  kind: 'cli';
  label: string;
  argv: string[];
  /** Set in the child's environment before the command runs (S3 credentials). */
  env?: Record<string, string>;
}

/** Runs the CLI's entry in this process with its stdout kept (the last line of ours is the result). */
export async function childCli(spec: CliSpec): Promise<ChildResult> {
  Object.assign(process.env, spec.env);
  const write = process.stdout.write.bind(process.stdout);
  let output = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    if (output.length < 4096) output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  }) as typeof process.stdout.write;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let exitCode: number;
  try {
    exitCode = await cliMain(spec.argv);
  } finally {
    process.stdout.write = write;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    label: spec.label,
    rows: 0,
    requests: 0,
    seconds: +seconds.toFixed(2),
    rowsPerSec: 0,
    cpuSec: +((cpu.user + cpu.system) / 1e6).toFixed(2),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    exitCode,
    output: output.split('\n').slice(0, 4).join('\n'),
  };
}

// ---------------------------------------------------------------------------------------------
// Goal 1 of issue 33

const MAX_RERUN_S = 5;
const MAX_RERUN_REQUESTS_PER_CHAIN = 2;
const MAX_PLAN_S = 5;
const MAX_VERIFY_S = 60;
const MAX_RSS_MB = 400;

/** The sandbox's data starts 2024-02-01 and serves at least four days on every chain. */
const SANDBOX_TO = '2024-02-04';
const DAY_MS = 86_400_000;
/** The sandbox's 3 seeded chains and this many small ones. */
const EXTRA_CHAINS = 7;
const GENERATED_RUN_ID = '20240204T000000Z-generated';
const RADOSGW = resolve(fileURLToPath(import.meta.url), '../../scripts/s3/radosgw.sh');
/** Files written at once while generating. */
const WRITES_IN_FLIGHT = 64;

export interface ScaleOptions {
  windows: number[];
  wallets: number;
  /** Destinations to measure: 'local' and/or 's3' (a radosgw started for the part). */
  stores: string[];
  /** How the generated state is kept: unit manifests (today's) or one marker per window (older versions'). */
  layout: 'manifests' | 'markers';
  profile: boolean;
}

export interface ScaleDeps {
  inChild(spec: CliSpec, profile: boolean): Promise<ChildResult>;
  emit(text: string): void;
  /** Records a goal's verdict for the bench's list of goals; returns "met" or "NOT met". */
  goal(text: string, measured: string, met: boolean): string;
}

interface Measured {
  label: string;
  result: ChildResult;
  /** From the child's start to its exit, as seen by the parent. */
  processSeconds: number;
  requests: number;
}

export async function scale(opts: ScaleOptions, deps: ScaleDeps): Promise<void> {
  // Loaded here, not with the module: every child of bench/run.ts runs this module's bundle.
  const { startSandbox } = await import('@insight-export/sandbox');
  const sandbox = await startSandbox({ extraChains: EXTRA_CHAINS, host: '127.0.0.1', port: 0 });
  const chains = sandbox.data.chains.map((c) => c.chainId);
  const lines = [
    '## Issue 33: the scale part (state of a complete job against its number of unit-windows)',
    '',
    `A destination's state generated without rows, ${opts.layout === 'manifests' ? "in today's layout (one manifest and one record segment per unit, as a run's fold leaves them)" : 'in the layout of older versions (one completed marker per window; the first run folds them into manifests)'}, ` +
      `every window with its edge block where the sandbox has one; windows inside the sandbox's data list one empty placeholder data file at the key the sink would give it, ` +
      `the days before its first block have no rows and no file (written directly, not by the commit protocol): ` +
      `${opts.wallets} wallets x ${chains.length} chains (the sandbox's 3 and ${EXTRA_CHAINS} small ones) x daily windows ending ${SANDBOX_TO} (inside the sandbox's data, so the range is complete; ` +
      `the days before its first block, 2024-02-01, are windows without blocks). Each command is the CLI's own entry in a fresh process: ` +
      `\`run\` of the complete job twice (the first writes what a run keeps beside the state: lease, claims, reorganisation check records; the second is the cron re-run measured), ` +
      '`plan`, `verify --quick` (state and listing, file sizes, no row contents). Requests = answered by the sandbox. Local files are in the page cache (written just before).' +
      (opts.stores.includes('s3') ? ' S3 is a single-node radosgw on this machine (objects in memory), written with S3Store.' : ''),
    '',
    '| destination | unit-windows | days | generated in s | command | s (command) | s (process) | CPU s | requests (per chain) | peak RSS MB | goal |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const goals: string[] = [];
  try {
    for (const kind of opts.stores) {
      const place = kind === 's3' ? await startRadosgw() : localPlace();
      try {
        for (const windows of opts.windows) {
          const days = Math.max(1, Math.round(windows / (opts.wallets * chains.length)));
          const work = mkdtempSync(join(tmpdir(), 'insight-bench-scale-'));
          try {
            const jobFile = writeJob(work, sandbox, opts.wallets, chains, days);
            const destination = await place.destination(work, windows);
            const t0 = performance.now();
            const generated = await generateState(jobFile, destination, sandbox, opts.layout);
            const genSeconds = (performance.now() - t0) / 1000;
            console.error(`  scale ${place.label} ${fmtN(generated.windows)} windows: state generated in ${genSeconds.toFixed(1)} s`);
            const common = ['--destination', destination.url, ...place.flags, '--base-url', sandbox.url, '--log-level', 'warn'];
            const staging = ['--staging-dir', join(work, 'staging')];
            const commands: [string, string[]][] = [
              ['run (first, settles the generated state)', ['run', jobFile, ...common, ...staging]],
              ['run (re-run of the complete job)', ['run', jobFile, ...common, ...staging]],
              ['plan', ['plan', jobFile, ...common]],
              ['verify --quick', ['verify', jobFile, '--quick', ...common]],
            ];
            const measured: Measured[] = [];
            for (const [label, argv] of commands) {
              sandbox.resetStats();
              const p0 = performance.now();
              const spec: CliSpec = { kind: 'cli', label: `scale ${place.label} ${windows} ${label}`, argv, env: place.env };
              const result = await deps.inChild(spec, opts.profile);
              const processSeconds = (performance.now() - p0) / 1000;
              const requests = sandbox.stats().requests;
              measured.push({ label, result, processSeconds, requests });
              console.error(
                `  scale ${place.label} ${fmtN(generated.windows)} ${label}: ${result.seconds} s, exit ${result.exitCode}, ${requests} requests, peak RSS ${result.peakRssMB} MB` +
                  (result.exitCode === 0 ? '' : `\n${result.output}`),
              );
            }
            for (const m of measured) {
              const verdict = judge(m, chains.length, `${place.label}, ${fmtN(generated.windows)} unit-windows`);
              if (verdict.goal) {
                goals.push(verdict.goal.text);
                deps.goal(
                  `issue 33 goal 1: ${m.label} (${place.label}, ${fmtN(generated.windows)} unit-windows)`,
                  verdict.goal.measured,
                  verdict.goal.met,
                );
              }
              lines.push(
                `| ${place.label} | ${fmtN(generated.windows)} | ${days} | ${m === measured[0] ? genSeconds.toFixed(1) : ''} | ${m.label}${m.result.exitCode === 0 ? '' : ` (exit ${m.result.exitCode})`} | ` +
                  `${m.result.seconds} | ${m.processSeconds.toFixed(2)} | ${m.result.cpuSec} | ${m.requests} (${(m.requests / chains.length).toFixed(1)}) | ${m.result.peakRssMB} | ${verdict.cell} |`,
              );
            }
          } finally {
            await removeTree(work);
          }
        }
      } finally {
        await place.close();
      }
    }
  } finally {
    await sandbox.close();
  }
  lines.push('', 'Goal 1 in this run:', '', ...goals.map((g) => `- ${g}`));
  deps.emit(lines.join('\n'));
}

/** Where a generated state goes: how the CLI names it, and how the generator writes an object there. */
interface Destination {
  url: string;
  write(key: string, body: string): Promise<unknown>;
}

/** A kind of destination measured: local directories, or buckets of one S3 server. */
interface Place {
  label: string;
  /** CLI flags and environment that reach it. */
  flags: string[];
  env?: Record<string, string>;
  destination(work: string, windows: number): Promise<Destination>;
  close(): Promise<void>;
}

/** A local store's keys are paths below its root: objects are written as files, directly. */
function localPlace(): Place {
  return {
    label: 'local',
    flags: [],
    destination: async (work) => {
      const root = join(work, 'out');
      const made = new Map<string, Promise<unknown>>();
      const ensureDir = (dir: string) => {
        let p = made.get(dir);
        if (!p) made.set(dir, (p = mkdir(dir, { recursive: true })));
        return p;
      };
      return {
        url: root,
        write: async (key, body) => {
          const file = join(root, key);
          await ensureDir(dirname(file));
          await writeFile(file, body);
        },
      };
    },
    close: async () => undefined,
  };
}

const S3_KEY_ID = 'insightexportbenchkey';
const S3_SECRET = 'insightexportbenchsecret000000000000000';

/** A throwaway radosgw (scripts/s3/radosgw.sh, as the tests start it); a bucket per generated state, written by S3Store. */
async function startRadosgw(): Promise<Place> {
  const dir = mkdtempSync(join(tmpdir(), 'insight-bench-rgw-'));
  const port = await freePort();
  const env = { S3_ACCESS_KEY_ID: S3_KEY_ID, S3_SECRET_ACCESS_KEY: S3_SECRET, RGW_WATCH_PID: String(process.pid) };
  await run(RADOSGW, ['start', join(dir, 'cluster'), String(port)], env);
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: S3_KEY_ID, secretAccessKey: S3_SECRET };
  const { CreateBucketCommand, S3Client } = await import('@aws-sdk/client-s3');
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  return {
    label: 'S3 (radosgw)',
    flags: ['--s3-endpoint', endpoint, '--region', 'us-east-1'],
    env: { AWS_ACCESS_KEY_ID: S3_KEY_ID, AWS_SECRET_ACCESS_KEY: S3_SECRET },
    destination: async (_work, windows) => {
      const bucket = `scale-${windows}-${Date.now().toString(36)}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      const store = await openStore(`s3://${bucket}`, { s3: { endpoint, region: 'us-east-1', credentials } });
      return { url: `s3://${bucket}`, write: (key, body) => store.put(key, body, { contentType: 'application/json' }) };
    },
    close: async () => {
      client.destroy();
      await run(RADOSGW, ['stop', join(dir, 'cluster'), String(port)], {});
      await removeTree(dir);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => done(port));
    });
  });
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((done, fail) =>
    execFile(cmd, args, { env: { ...process.env, ...env } }, (err, _stdout, stderr) =>
      err ? fail(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : done(),
    ),
  );
}

function judge(m: Measured, chains: number, where: string): { cell: string; goal?: { text: string; measured: string; met: boolean } } {
  const s = m.result.seconds;
  const rss = m.result.peakRssMB;
  const ok = (met: boolean) => (met ? 'met' : 'NOT met');
  const rssMet = rss <= MAX_RSS_MB;
  const at = `(${where})`;
  if (m.label.startsWith('run (first')) return { cell: '' };
  if (m.label.startsWith('run')) {
    const perChain = m.requests / chains;
    const met = s <= MAX_RERUN_S && perChain <= MAX_RERUN_REQUESTS_PER_CHAIN && rssMet;
    const measured = `${s} s, ${perChain.toFixed(1)} requests per chain, ${rss} MB`;
    return {
      cell: `≤ ${MAX_RERUN_S} s ${ok(s <= MAX_RERUN_S)}; ≤ ${MAX_RERUN_REQUESTS_PER_CHAIN} requests per chain ${ok(perChain <= MAX_RERUN_REQUESTS_PER_CHAIN)}; ≤ ${MAX_RSS_MB} MB ${ok(rssMet)}`,
      goal: { text: `re-run of a complete job ${at}: ${measured}: ${ok(met)}`, measured, met },
    };
  }
  const max = m.label === 'plan' ? MAX_PLAN_S : MAX_VERIFY_S;
  const met = s <= max && rssMet && m.result.exitCode === 0;
  const measured = `${s} s, ${rss} MB${m.result.exitCode === 0 ? '' : `, exit ${m.result.exitCode}`}`;
  return {
    cell: `≤ ${max} s ${ok(s <= max)}; ≤ ${MAX_RSS_MB} MB ${ok(rssMet)}`,
    goal: { text: `${m.label} ${at}: ${measured}: ${ok(met)}`, measured, met },
  };
}

const fmtN = (n: number) => Math.round(n).toLocaleString('en-US');

/** The job: `wallets` of the sandbox's wallets on every chain, daily windows, `days` days up to SANDBOX_TO. */
export function writeJob(dir: string, sandbox: Sandbox, wallets: number, chains: number[], days: number): string {
  const to = Date.parse(`${SANDBOX_TO}T00:00:00Z`);
  const from = new Date(to - days * DAY_MS).toISOString().slice(0, 10);
  const file = join(dir, 'scale.yaml');
  writeFileSync(
    file,
    [
      'name: scale',
      'source:',
      '  base_url: sandbox',
      `  chains: [${chains.join(', ')}]`,
      'targets:',
      ...sandbox.data.wallets.slice(0, wallets).flatMap((w) => [`  - wallet: "${w.address}"`, '    datasets: [transactions]']),
      'range:',
      `  from: "${from}"`,
      `  to: "${SANDBOX_TO}"`,
      '  chunk: 1d',
      'output:',
      '  format: parquet',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * Every window of the job as completed (the records WindowState writes, in the layout asked) and
 * an empty data file for each window inside the sandbox's data, many written at once.
 */
export async function generateState(
  jobFile: string,
  destination: Destination,
  sandbox: Sandbox,
  layout: ScaleOptions['layout'],
): Promise<{ windows: number }> {
  const job = await loadJob(jobFile);
  const range = job.range!;
  if (range.to === 'latest') throw new Error('the scale job has a fixed range');
  // Only for the keys: the state of this job, wherever it is.
  const state = new WindowState(new LocalStore(tmpdir()), job.name);
  const edges = new Map<string, BlockEdge | undefined>();
  const edgeOf = (chainId: number, end: number) => {
    const key = `${chainId}:${end}`;
    if (!edges.has(key)) edges.set(key, lastBlockBefore(sandbox, chainId, end));
    return edges.get(key);
  };
  const windows = cutOnGrid({ start: range.from, end: range.to }, range.chunk);
  const limit = pLimit(WRITES_IN_FLIGHT);
  const completedAt = new Date().toISOString();
  let count = 0;
  for (const spec of jobStreams(job)) {
    const writes: Promise<unknown>[] = [];
    const records: WindowRecord[] = [];
    for (const w of windows) {
      const edge = edgeOf(spec.chainId, w.end);
      const date = new Date(w.start * 1000).toISOString().slice(0, 10);
      const folder = renderPartition(DEFAULT_PARTITIONING, { dataset: 'transactions', chain_id: spec.chainId, date });
      const fileKey = `${folder}/${spec.targetKey}__${windowKey(w)}__0000.parquet`;
      const files = w.end > sandbox.data.chain(spec.chainId)!.firstTimestamp ? [{ key: fileKey, rows: 0, bytes: 0 }] : [];
      const record: WindowRecord = {
        unit_key: spec.unitKey,
        start: w.start,
        end: w.end,
        rows: 0,
        files,
        run_id: GENERATED_RUN_ID,
        completed_at: completedAt,
        ...(edge ? { edge } : {}),
      };
      records.push(record);
      if (layout === 'markers') {
        const marker = state.completedKey(spec.unitKey, w.start, w.end);
        writes.push(limit(() => destination.write(marker, JSON.stringify(record))));
      }
      for (const f of files) writes.push(limit(() => destination.write(f.key, '')));
      count++;
    }
    if (layout === 'manifests') {
      const segment = `${state.root}/segments/${spec.unitKey}/${GENERATED_RUN_ID}.json`;
      const manifest: StreamManifest = {
        format: 1,
        unit_key: spec.unitKey,
        ...encodeWindows(records),
        segments: [{ key: segment, records: records.length }],
      };
      writes.push(
        limit(() => destination.write(segment, JSON.stringify({ format: 1, unit_key: spec.unitKey, records } satisfies Segment))),
      );
      writes.push(limit(() => destination.write(`${state.root}/units/${spec.unitKey}.json`, JSON.stringify(manifest))));
    }
    await Promise.all(writes);
  }
  return { windows: count };
}

/** The chain's last block before `time` (what a run records as a time window's edge); none before its first block. */
function lastBlockBefore(sandbox: Sandbox, chainId: number, time: number): BlockEdge | undefined {
  const chain = sandbox.data.chain(chainId)!;
  if (time <= chain.firstTimestamp) return undefined;
  const offset = Math.min(chain.headBlock - chain.firstBlock, Math.ceil((time - chain.firstTimestamp) / chain.blockTimeSeconds) - 1);
  const block = sandbox.data.block(chainId, chain.firstBlock + offset);
  if (!block || block.block_timestamp >= time)
    throw new Error(`sandbox block ${chain.firstBlock + offset} on ${chainId} is not before ${time}`);
  return { block_number: block.block_number, block_hash: block.block_hash };
}

/** rm -rf: a million files go faster through rm than through fs.rm. */
function removeTree(dir: string): Promise<void> {
  return run('rm', ['-rf', dir], {});
}
