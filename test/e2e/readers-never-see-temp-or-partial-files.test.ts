/**
 * A local destination is read while a run writes into it (a notebook, a cron'd DuckDB query):
 * LocalStore's temp files (in `<root>/.insight-export-tmp/`, which DuckDB's `**` does descend
 * into) never match `**\/*.parquet` or `**\/*.ndjson.gz`, every file a reader's glob finds is
 * complete, and nothing but empty folders is left in the temp folder after the run.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { duckdb, exportJob, listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { completedWindows } from '../helpers/completed-windows.js';

const sandbox = useSandbox({ seed: 42, transactions: 20_000 });
const TMP = '.insight-export-tmp';

const tmp = useTempDir('e2e-readers-');

function tempFolderFiles(root: string): string[] {
  try {
    return readdirSync(join(root, TMP), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

describe.each([
  { format: 'parquet' as const, ext: 'parquet', reader: 'read_parquet' },
  { format: 'ndjson' as const, ext: 'ndjson.gz', reader: 'read_json' },
])('$format output read during the run', ({ format, ext, reader }) => {
  const root = () => join(tmp.dir, format, 'out');
  const seenTemp = new Set<string>();
  const globbed = new Set<string>();
  const badGlobs: string[] = [];
  const unreadable: string[] = [];
  let reads = 0;

  beforeAll(async () => {
    let running = true;
    const poll = async () => {
      while (running) {
        for (const f of tempFolderFiles(root())) seenTemp.add(f);
        const files = (await duckdb(`SELECT file FROM glob('${root()}/**/*.${ext}')`).catch(() => [])).map((r) => r.file as string);
        for (const f of files) {
          globbed.add(f);
          if (f.includes(`/${TMP}/`)) badGlobs.push(f);
        }
        // every file a glob finds reads completely (a half-written file fails here)
        for (const f of files.slice(-3)) {
          try {
            await duckdb(`SELECT count(*) FROM ${reader}('${f}')`);
            reads++;
          } catch (err) {
            unreadable.push(`${f}: ${(err as Error).message.split('\n')[0]}`);
          }
        }
        await nextTurn();
      }
    };
    const poller = poll();
    const tokens = sandbox.data.contracts.filter((c) => c.symbol === 'SUSD');
    const report = await exportJob({
      job: {
        name: 'readers',
        source: { base_url: 'sandbox', chains: [1, 8453, 42161] },
        targets: [
          { wallet: 'alice.eth', datasets: ['transactions'] },
          ...tokens.map((t) => ({
            contract: t.address,
            chains: [t.chainId],
            events: ['Transfer(address indexed from, address indexed to, uint256 value)'],
          })),
        ],
        range: { from: '2024-02-01', to: '2024-02-04', chunk: '6h' },
      },
      dir: join(tmp.dir, format),
      sandbox,
      destination: root(),
      flags: { format },
    });
    running = false;
    await poller;
    expect(report.status).toBe('succeeded');
  });

  it('readers polled the destination while files were being committed', () => {
    expect(reads).toBeGreaterThan(0);
    expect(globbed.size).toBeGreaterThan(0);
  });

  it('temp files never carry a data file extension', () => {
    expect(seenTemp.size).toBeGreaterThan(0); // the poller did catch uploads in progress
    for (const name of seenTemp) expect(name.endsWith(`.${ext}`), name).toBe(false);
    for (const name of seenTemp) expect(name).not.toMatch(/\.(parquet|ndjson|gz|json)$/);
  });

  it('a **/*.' + ext + ' glob never finds a temp file, and every file it finds is complete', () => {
    expect(badGlobs).toEqual([]);
    expect(unreadable).toEqual([]);
  });

  it('leaves no file in the temp folder, and every data file is a committed one', async () => {
    expect(tempFolderFiles(root())).toEqual([]);
    const data = listFiles(root()).filter((f) => f.endsWith(`.${ext}`));
    const committed = new Set<string>();
    for (const { record } of await completedWindows(root(), 'readers')) for (const f of record.files) committed.add(f.key);
    expect(data.length).toBeGreaterThan(0);
    expect(new Set(data)).toEqual(committed);
  });
});
