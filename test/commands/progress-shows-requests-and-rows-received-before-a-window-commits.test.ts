/**
 * Issue 31 item 6: with --requests-per-second 10 the bar showed `0/93 windows | 0 rows | 0 rows/s`
 * for 27 s while 265 requests went out. The bar shows the requests sent (counted from before the
 * plan) and the rows received in pages before any window commits, and rows/s follows them.
 */
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { ProgressLine } from '../../src/commands/progress.js';
import { setStatusLine } from '../../src/log.js';
import type { ProgressEvent } from '../../src/run/export-windows.js';
import { exportJob } from '../helpers/export.js';
import { FakeTty } from '../helpers/fake-tty.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ transactions: 2_000 });
const tmp = useTempDir('progress-events-');

afterEach(() => {
  setStatusLine(null);
  vi.useRealTimers();
});

it('requests and received rows show before the first window commits, and rows/s counts them', () => {
  vi.useFakeTimers();
  const tty = new FakeTty();
  const progress = new ProgressLine(tty as unknown as NodeJS.WriteStream);
  // The head search, before the plan: counted, not drawn (no bar yet).
  for (let i = 0; i < 5; i++) progress.on({ kind: 'request' });
  expect(tty.screen.join('')).toBe('');
  progress.setTotal(93);
  for (let i = 0; i < 260; i++) progress.on({ kind: 'request' });
  progress.on({ kind: 'received', unitKey: 'u', rows: 1_000 });
  vi.advanceTimersByTime(10_000);
  progress.on({ kind: 'received', unitKey: 'u', rows: 200 });

  const bar = tty.screen.at(-1)!.trimEnd();
  expect(bar).toMatch(/^\[-+\] 0\/93 windows \| 265 requests \| 0 rows \(1,200 received\) \| 120 rows\/s$/);
  progress.finish();
});

it('a run reports each request it sends and the rows of each page as it arrives', { timeout: 60_000 }, async () => {
  const events: ProgressEvent[] = [];
  const report = await exportJob({
    dir: tmp.dir,
    sandbox,
    destination: join(tmp.dir, 'out'),
    job: {
      name: 'progress',
      source: { base_url: 'sandbox', chains: [1] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      output: { format: 'ndjson' },
    },
    onProgress: (e) => events.push(e),
  });
  expect(report.status).toBe('succeeded');
  expect(report.rows).toBeGreaterThan(0);
  expect(events.filter((e) => e.kind === 'request')).toHaveLength(report.requests);
  const firstDone = events.findIndex((e) => e.kind === 'unit-done');
  const receivedBefore = events.slice(0, firstDone).filter((e) => e.kind === 'received');
  expect(receivedBefore.length).toBeGreaterThan(0);
  const received = events.reduce((n, e) => n + (e.kind === 'received' ? e.rows : 0), 0);
  expect(received).toBeGreaterThanOrEqual(report.rows);
});
