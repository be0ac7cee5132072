/**
 * A cache (or a replica of another branch) answering `resolve/<block number>` with the block from
 * before a reorganisation, while list answers and `resolve/<hash>` are the service's current ones.
 * A row at a block the run resolved is checked against that block (src/run/window-proof.ts
 * rowCheck): here the run's block is the stale side, not the row. The run asks the service for the
 * row's hash (resolve/<hash>, a URL no answer of another branch is kept under) and adopts the block
 * it knows by it, so the current answers prove the window. Before, every attempt was refused and
 * the run exited 1 though the service answered consistently. Driven through the CLI.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise } from '@insight-export/sandbox';
import { runCli } from '../helpers/cli-in-process.js';
import { readTable, type CanonRow } from '../helpers/export.js';
import { withSandbox } from '../helpers/knob-sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const tmp = useTempDir('stale-resolve-');
const CHAIN = 8453;
const BY_NUMBER = /\/resolve\/\d+$/;

/** A proxy keeping the first answer of each `resolve/<number>` URL and serving it once `stale` is on. */
async function staleNumberResolves(upstream: string) {
  const target = new URL(upstream);
  const kept = new Map<string, string>();
  const state = { stale: false, servedStale: 0 };
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const byNumber = BY_NUMBER.test(new URL(path, 'http://p').pathname);
    const hit = byNumber ? kept.get(path) : undefined;
    if (state.stale && hit !== undefined) {
      state.servedStale++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(hit);
      return;
    }
    const headers = { ...req.headers };
    if (byNumber) delete headers['accept-encoding'];
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path, headers }, (answer) => {
      if (!byNumber || answer.statusCode !== 200) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (!kept.has(path)) kept.set(path, body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function run(jobFile: string): Promise<{ code: number; report: RunReport; stderr: string }> {
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error']);
  if (!r.stdout) throw new Error(`no report (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, report: JSON.parse(r.stdout) as RunReport, stderr: r.stderr };
}

const sorted = (rows: CanonRow[]) => rows.sort((a, b) => String(a.item_id).localeCompare(String(b.item_id)));

it(
  'a run adopts the block the service knows by a row hash over a stale answer for its number, and exports the current branch exactly',
  { timeout: 120_000 },
  async () => {
    await withSandbox({ seed: 7, transactions: 20_000 }, async (sandbox) => {
      const proxy = await staleNumberResolves(sandbox.url);
      try {
        const alice = sandbox.data.wallet('alice.eth')!.address;
        // Block windows whose edge block holds one of alice's rows inside the blocks a reorganisation replaces.
        const chain = sandbox.data.chain(CHAIN)!;
        const depth = 3000;
        const rows = [...sandbox.data.transactions(CHAIN)].filter(
          (t) =>
            (t.from_address === alice || t.to_address === alice) &&
            t.block_number > chain.headBlock - depth + 10 &&
            t.block_number < chain.headBlock - 1000,
        );
        expect(rows.length).toBeGreaterThan(0);
        const edge = rows[Math.floor(rows.length / 2)]!.block_number;
        const job = (name: string, baseUrl: string) =>
          writeJob(join(tmp.dir, name), {
            name,
            source: { base_url: baseUrl, chains: [CHAIN] },
            targets: [{ wallet: alice, datasets: ['transactions'] }],
            range: { by: 'block', from: edge + 1 - 500, to: edge + 1, chunk: 500 },
            output: { format: 'ndjson', destination: join(tmp.dir, name, 'out') },
          });
        // Before the reorganisation: the proxy keeps each block number's answer (the edge's among them).
        expect((await run(await job('warm', proxy.url))).code).toBe(0);
        reorganise(sandbox.data, CHAIN, depth);
        proxy.state.stale = true;

        const viaProxy = await run(await job('stale', proxy.url));
        expect(viaProxy.code, viaProxy.stderr).toBe(0);
        expect(proxy.state.servedStale).toBeGreaterThan(0);
        expect(viaProxy.report.bad_answers?.block_hash ?? 0).toBeGreaterThan(0);
        const direct = await run(await job('fresh', sandbox.url));
        expect(direct.code, direct.stderr).toBe(0);
        const [got, want] = [
          sorted(await readTable(join(tmp.dir, 'stale', 'out'), 'transactions', 'ndjson')),
          sorted(await readTable(join(tmp.dir, 'fresh', 'out'), 'transactions', 'ndjson')),
        ];
        expect(got.length).toBeGreaterThan(0);
        expect(got).toEqual(want);
      } finally {
        await proxy.close();
      }
    });
  },
);
