/**
 * A model of the exporter with its per-page work (JSON.parse -> normalise -> toRow with decoding
 * -> NDJSON encode -> gzip level 3) moved off the main thread into worker threads, to measure
 * what that design could reach on this machine before building it into the pipeline.
 *
 * The main thread does what the limit does (the same requests, the same concurrency, an undici
 * pool) but hands each response's bytes to a worker (transferred, not copied) and waits for its
 * row count before that request slot goes on, as the paginator needs each page's count. With
 * 0 workers the same work runs on the main thread, which checks that the model costs what the
 * exporter costs. No pagination, state, files or uploads: an upper bound of the design.
 *
 *   npm run bench -- --only throughput --formats ndjson --model-workers 0,1,2
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { transactionsDataset } from '../src/datasets/transactions.js';
import { createNdjsonEncoder } from '../src/sink/row-values.js';
import { TextFileStream } from '../src/sink/staging.js';
import { normaliseListResponse } from '../src/source/response-records.js';
import type { TransactionRecord } from '../src/source/records.js';
import { replayRequests } from './replay-requests.js';
import { decodingWalletTarget } from './sandbox-transaction-rows.js';

export interface ModelSpec {
  kind: 'model';
  label: string;
  origin: string;
  pathsFile: string;
  concurrency: number;
  wallet: string;
  workers: number;
}

interface PageWorkData {
  kind: 'page-work';
  wallet: string;
}

interface PageWork {
  process(body: Uint8Array): Promise<number>;
  /** Ends the gzip file and removes it. */
  end(): Promise<void>;
}

/** One page's work, as the exporter's NDJSON.gz writer does it (into a staging file of its own). */
function pageWork(wallet: string): PageWork {
  const target = decodingWalletTarget(wallet);
  const encode = createNdjsonEncoder(transactionsDataset.columns(target));
  const path = join(tmpdir(), `insight-bench-model-${process.pid}-${threadId}.ndjson.gz`);
  const file = new TextFileStream(path, 3);
  let rowsInFile = 0;
  return {
    async process(body) {
      const json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as { data?: unknown };
      // The run's log holds resolve/<n> answers too (window edges): no rows to write.
      if (!Array.isArray(json.data)) return 0;
      const records = normaliseListResponse(json, 'model', 'transactions', false).data as TransactionRecord[];
      const rows = records.map((r) => transactionsDataset.toRow(r, target));
      await file.write(encode(rows, rowsInFile));
      rowsInFile += rows.length;
      return rows.length;
    },
    async end() {
      await file.end();
      await rm(path, { force: true });
    },
  };
}

type ToWorker = { id: number; body: Uint8Array } | { id: number; end: true };

/** True when this thread is a model worker (and serves pages until told to end). */
export function servePageWorkIfWorker(): boolean {
  if (isMainThread || (workerData as PageWorkData | undefined)?.kind !== 'page-work') return false;
  const work = pageWork((workerData as PageWorkData).wallet);
  parentPort!.on('message', (msg: ToWorker) => {
    const done = 'end' in msg ? work.end().then(() => 0) : work.process(msg.body);
    void done.then((rows) => parentPort!.postMessage({ id: msg.id, rows }));
  });
  return true;
}

interface PagePool {
  process(body: Buffer): Promise<number>;
  close(): Promise<void>;
}

function workerPool(script: string, wallet: string, n: number): PagePool {
  const workers = Array.from({ length: n }, () => new Worker(script, { workerData: { kind: 'page-work', wallet } satisfies PageWorkData }));
  const load = workers.map(() => 0);
  const waiting = new Map<number, { resolve: (rows: number) => void; reject: (err: unknown) => void }>();
  const exited = new Set<Worker>();
  let failure: unknown;
  let nextId = 0;
  for (const w of workers) {
    w.on('message', (m: { id: number; rows: number }) => waiting.get(m.id)!.resolve(m.rows));
    // A page the work throws on ends the worker: fail the measurement rather than wait forever.
    w.on('error', (err) => {
      failure ??= err;
      for (const { reject } of waiting.values()) reject(err);
      waiting.clear();
    });
    w.on('exit', () => exited.add(w));
  }
  return {
    process(body) {
      if (failure !== undefined) return Promise.reject(failure as unknown);
      const i = load.indexOf(Math.min(...load));
      const id = nextId++;
      load[i]!++;
      // Buffer.concat of a large response owns its ArrayBuffer: transferring it moves it, no copy.
      // A small one may sit in Node's shared pool, which must not be transferred: copy those.
      const owned = body.byteOffset === 0 && body.buffer.byteLength === body.byteLength;
      const bytes = owned ? new Uint8Array(body.buffer, 0, body.byteLength) : new Uint8Array(body);
      return new Promise((resolve, reject) => {
        const resolveRows = (rows: number) => {
          waiting.delete(id);
          load[i]!--;
          resolve(rows);
        };
        waiting.set(id, { resolve: resolveRows, reject });
        workers[i]!.postMessage({ id, body: bytes }, [bytes.buffer as ArrayBuffer]);
      });
    },
    async close() {
      await Promise.all(
        workers.map(async (w) => {
          if (exited.has(w)) return;
          const id = nextId++;
          const ended = new Promise<void>((resolve, reject) => waiting.set(id, { resolve: () => resolve(), reject }));
          w.postMessage({ id, end: true } satisfies ToWorker);
          await ended.catch(() => undefined);
          await w.terminate();
        }),
      );
    },
  };
}

/** Rows and requests of the model run (the caller times it and turns it into a ChildResult). */
export async function runModel(spec: ModelSpec, script: string): Promise<{ rows: number; requests: number }> {
  const onMain = spec.workers > 0 ? null : pageWork(spec.wallet);
  const pool: PagePool = onMain
    ? { process: (body) => onMain.process(body), close: () => onMain.end() }
    : workerPool(script, spec.wallet, spec.workers);
  try {
    return await replayRequests(spec.origin, spec.pathsFile, spec.concurrency, (body) => pool.process(body));
  } finally {
    await pool.close();
  }
}
