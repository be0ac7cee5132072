import { Worker } from 'node:worker_threads';

/**
 * One thread that runs every DuckDB statement of the process. DuckDB 1.5 keeps the memory of a
 * conversion with the thread that ran it (also with MALLOC_ARENA_MAX=1, so not glibc's arenas).
 * Through the node API each statement runs on whichever libuv thread is free, and after a few
 * conversions each of the four holds its own ~55 MB. On one thread the process keeps one
 * conversion's worth (bench/experiments/duckdb-conversion-memory.ts: 8 conversions of a 23 MB staged file,
 * +130 MB of RSS on the libuv threads, +60 MB on this one).
 *
 * The thread runs a statement's tasks one by one (DuckDB's pending-result interface) and turns
 * its event loop between them, so an interrupt arrives within one task (~0.1 s).
 */

export interface DuckDBThreadOptions {
  /** DuckDB's configuration of the instance, as DuckDBInstance.create() takes it. */
  config: Record<string, string>;
}

interface Request {
  kind: 'run' | 'interrupt';
  id: number;
  sql?: string;
}

interface Reply {
  id: number;
  error?: string;
}

// Plain JavaScript evaluated by the worker: it runs the same way from the sources (tsx, vitest),
// the compiled library and the bundled bin, none of which would find a separate worker file. Only
// dynamic import(): the worker takes the process's flags, and with --input-type=module the source
// is a module, without require().
const THREAD_SOURCE = `
(async () => {
  const { parentPort, workerData } = await import('node:worker_threads');
  const { DuckDBInstance, DuckDBPendingResultState } = (await import(workerData.duckdbUrl)).default;
  let instance;
  const interrupted = new Set();
  let queue = Promise.resolve();
  const turn = (ms) => new Promise((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));
  async function run(id, sql) {
    let connection;
    try {
      instance ??= await DuckDBInstance.create(':memory:', workerData.config);
      connection = await instance.connect();
      const pending = await connection.start(sql);
      for (;;) {
        if (interrupted.has(id)) throw new Error('INTERRUPT: the statement was interrupted');
        const state = pending.runTask();
        if (state === DuckDBPendingResultState.RESULT_READY) break;
        await turn(state === DuckDBPendingResultState.NO_TASKS_AVAILABLE ? 1 : 0);
      }
      await pending.getResult();
      parentPort.postMessage({ id });
    } catch (err) {
      parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    } finally {
      interrupted.delete(id);
      connection?.closeSync();
    }
  }
  parentPort.on('message', (request) => {
    if (request.kind === 'interrupt') interrupted.add(request.id);
    else queue = queue.then(() => run(request.id, request.sql));
  });
})();
`;

/** A statement sent to the thread: settles when DuckDB has run it or given up. */
export interface DuckDBStatement {
  done: Promise<void>;
  interrupt(): void;
}

export class DuckDBThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private stopped: Error | undefined;

  constructor(options: DuckDBThreadOptions) {
    const duckdbUrl = import.meta.resolve('@duckdb/node-api');
    this.worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { duckdbUrl, config: options.config } });
    this.worker.on('message', (reply: Reply) => this.settle(reply));
    this.worker.on('error', (err) => this.stop(err));
    this.worker.on('exit', (code) => this.stop(new Error(`the DuckDB thread exited with code ${code}`)));
    // An idle thread must not keep the process alive; one with statements in flight must. After
    // the listeners: adding a 'message' listener refs the worker again.
    this.worker.unref();
  }

  /** Runs one statement; statements run one after another in the order sent. */
  run(sql: string): DuckDBStatement {
    const id = this.nextId++;
    const done = new Promise<void>((resolve, reject) => {
      if (this.stopped) return reject(this.stopped);
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) this.worker.ref();
      this.worker.postMessage({ kind: 'run', id, sql } satisfies Request);
    });
    return {
      done,
      interrupt: () => {
        if (this.waiting.has(id)) this.worker.postMessage({ kind: 'interrupt', id } satisfies Request);
      },
    };
  }

  /** Ends the thread; statements still waiting reject. */
  async close(): Promise<void> {
    this.stop(new Error('the DuckDB thread was closed'));
    await this.worker.terminate();
  }

  private settle(reply: Reply): void {
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (reply.error === undefined) waiter.resolve();
    else waiter.reject(new Error(reply.error));
  }

  private stop(err: Error): void {
    this.stopped ??= err;
    for (const waiter of this.waiting.values()) waiter.reject(this.stopped);
    this.waiting.clear();
    this.worker.unref();
  }
}
