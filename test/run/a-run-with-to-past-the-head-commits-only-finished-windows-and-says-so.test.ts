import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { completedWindows } from '../helpers/completed-windows.js';

const sandbox = useSandbox({});
const tmp = useTempDir('clamp-');

describe('a run whose fixed `to` lies past the chain head', () => {
  it('commits no window past the head minus the safety lag, and its report says where it stopped', { timeout: 60_000 }, async () => {
    const chain = sandbox.data.chain(8453)!;
    const wallet = sandbox.data.wallet('alice.eth')!.address;
    const from = chain.headBlock - 300;
    const job = {
      name: 'clamp',
      source: { base_url: sandbox.url, chains: [8453] },
      targets: [{ wallet, datasets: ['transactions'] }],
      range: { from, to: chain.headBlock + 10_000, chunk: 100 },
      output: { format: 'ndjson', destination: join(tmp.dir, 'out') },
    };
    const report = await exportJob({ job, dir: tmp.dir, destination: join(tmp.dir, 'out') });
    expect(report.status).toBe('succeeded');
    const end = chain.headBlock - 64 + 1;
    expect(report.range_clamped).toEqual([
      { chain_id: 8453, to: chain.headBlock + 10_000, end, lag: chain.headBlock + 10_000 - end, lag_unit: 'blocks' },
    ]);
    // The head the service serves, found by a head search; how far it is behind the clock is shown.
    expect(report.service_heads).toEqual([
      { chain_id: 8453, block: chain.headBlock, time: chain.headTimestamp, exact: true, behind_clock_s: expect.any(Number) },
    ]);
    const markers = (await completedWindows(join(tmp.dir, 'out'), 'clamp')).map((w) => w.record);
    expect(markers.length).toBeGreaterThan(0);
    expect(Math.max(...markers.map((m) => m.end))).toBe(end);
  });
});
