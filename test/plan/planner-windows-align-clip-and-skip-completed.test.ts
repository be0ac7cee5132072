import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/load.js';
import { intersect, merge, totalLength, type Interval } from '../../src/plan/intervals.js';
import { planJob, windowKey, PlanError, type Plan } from '../../src/plan/plan.js';
import { emptySplit, selectShard, uncoveredSpans, withSpans } from '../../src/plan/shard-split.js';

const W1 = '0x1111111111111111111111111111111111111111';
const C1 = '0x2222222222222222222222222222222222222222';
const DAY = 86_400;

function job(range: string, extra = '') {
  return parseJob(
    `name: p
source: { base_url: sandbox, chains: [1, 8453] }
targets:
  - wallet: "${W1}"
  - contract: "${C1}"
    events:
      - "Transfer(address indexed from, address indexed to, uint256 value)"
      - "Approval(address indexed owner, address indexed spender, uint256 value)"
range: ${range}
${extra}`,
    'jobs/p.yaml',
  );
}

const none = () => [] as Interval[];
const windowsOf = (plan: Plan, unitKey: string) => plan.units.filter((u) => u.unitKey === unitKey).map((u) => u.window);

describe('planJob', () => {
  it('makes dataset x target x chain x window units with stable keys', async () => {
    const plan = await planJob(job('{ from: 15, to: 42, chunk: 10 }'), { completed: none });
    // 1 wallet + 1 contract with 2 events = 3 streams, on 2 chains, 4 windows each.
    expect(plan.units).toHaveLength(3 * 2 * 4);
    const u = plan.units[0]!;
    expect(u.unitKey).toBe(`transactions/${W1}/1/block`);
    expect(u.windowKey).toBe('000000000015_000000000020');
    const ev = plan.units.find((x) => x.dataset === 'events')!;
    expect(ev.unitKey).toMatch(new RegExp(`^events/${C1}_0xddf252ad[0-9a-f]{56}/1/block$`));
    expect(ev.target.kind === 'contract' && ev.target.event.name).toBe('Transfer');
  });

  it('aligns windows to the chunk grid and clips them to the range', async () => {
    const plan = await planJob(job('{ from: 15, to: 42, chunk: 10 }'), { completed: none });
    expect(windowsOf(plan, `transactions/${W1}/1/block`)).toEqual([
      { start: 15, end: 20 },
      { start: 20, end: 30 },
      { start: 30, end: 40 },
      { start: 40, end: 42 },
    ]);
  });

  it('aligns time windows to UTC midnight', async () => {
    const from = Date.UTC(2024, 0, 1, 7) / 1000; // 07:00
    const to = Date.UTC(2024, 0, 3, 12) / 1000; // 3 Jan 12:00
    const plan = await planJob(job(`{ from: "2024-01-01T07:00:00Z", to: "2024-01-03T12:00:00Z" }`), { completed: none });
    const ws = windowsOf(plan, `transactions/${W1}/1/time`);
    expect(ws.map((w) => w.start)).toEqual([from, Date.UTC(2024, 0, 2) / 1000, Date.UTC(2024, 0, 3) / 1000]);
    expect(ws.map((w) => w.end)).toEqual([Date.UTC(2024, 0, 2) / 1000, Date.UTC(2024, 0, 3) / 1000, to]);
    for (const w of ws.slice(1)) expect(w.start % DAY).toBe(0);
  });

  it('subtracts completed intervals, so a re-run plans exactly what is missing', async () => {
    const key = `transactions/${W1}/1/block`;
    const done: Interval[] = [
      { start: 20, end: 30 },
      { start: 33, end: 36 },
      { start: 0, end: 17 },
    ];
    const plan = await planJob(job('{ from: 15, to: 42, chunk: 10 }'), { completed: (k) => (k === key ? done : []) });
    const ws = windowsOf(plan, key);
    expect(ws).toEqual([
      { start: 17, end: 20 },
      { start: 30, end: 33 },
      { start: 36, end: 40 },
      { start: 40, end: 42 },
    ]);
    // Planned + completed = the range, with no overlap.
    const range = [{ start: 15, end: 42 }];
    expect(intersect(ws, done)).toEqual([]);
    expect(merge([...ws, ...intersect(done, range)])).toEqual(range);
    const cov = plan.coverage.find((c) => c.unitKey === key)!;
    expect(cov.done).toEqual([
      { start: 15, end: 17 },
      { start: 20, end: 30 },
      { start: 33, end: 36 },
    ]);
    // Other units are untouched.
    expect(windowsOf(plan, `transactions/${W1}/8453/block`)).toHaveLength(4);
  });

  it('moving `to` forward plans only the new part; a partial last window completes without overlap', async () => {
    const first = await planJob(job('{ from: 0, to: 25, chunk: 10 }'), { completed: none });
    const completed = new Map<string, Interval[]>();
    for (const u of first.units) completed.set(u.unitKey, [...(completed.get(u.unitKey) ?? []), u.window]);

    const second = await planJob(job('{ from: 0, to: 47, chunk: 10 }'), { completed: (k) => completed.get(k) ?? [] });
    const key = `transactions/${W1}/1/block`;
    expect(windowsOf(second, key)).toEqual([
      { start: 25, end: 30 },
      { start: 30, end: 40 },
      { start: 40, end: 47 },
    ]);
    for (const u of second.units) expect(intersect([u.window], completed.get(u.unitKey) ?? [])).toEqual([]);
    // Together the two runs cover the range exactly once.
    const all = [...windowsOf(first, key), ...windowsOf(second, key)];
    expect(totalLength(all)).toBe(47);
    expect(merge(all)).toEqual([{ start: 0, end: 47 }]);
  });

  it('resolves to: latest as head - safety_lag (inclusive head), asking each chain once', async () => {
    const asked: number[] = [];
    const heads: Record<number, number> = { 1: 1_000, 8453: 5_000 };
    const plan = await planJob(job('{ from: 900, to: latest, safety_lag: 64, chunk: 50 }'), {
      completed: none,
      latest: async (c) => {
        asked.push(c);
        return { block: heads[c]! };
      },
    });
    expect(asked.sort((a, b) => a - b)).toEqual([1, 8453]);
    // Newest exportable block on chain 1 is 1000 - 64 = 936: the range is [900, 937).
    expect(windowsOf(plan, `transactions/${W1}/1/block`)).toEqual([{ start: 900, end: 937 }]);
    expect(windowsOf(plan, `transactions/${W1}/8453/block`).at(-1)).toEqual({ start: 4900, end: 4937 });
    expect(plan.heads[1]).toEqual({ block: 1000 });
  });

  it('plans nothing for a chain whose safe head is not past `from` yet', async () => {
    const plan = await planJob(job('{ from: 900, to: latest, safety_lag: 200 }'), {
      completed: none,
      latest: async () => ({ block: 1_000 }),
    });
    expect(plan.units).toEqual([]);
    expect(plan.coverage.every((c) => c.range === null)).toBe(true);
  });

  it('fails clearly when to: latest has no head', async () => {
    await expect(planJob(job('{ from: 1, to: latest }'), { completed: none })).rejects.toThrow(PlanError);
    await expect(
      planJob(job('{ from: "2024-01-01", to: latest }'), { completed: none, latest: async () => ({ block: 5 }) }),
    ).rejects.toThrow(/head block time/);
  });

  it('orders units deterministically (same plan whatever order state returns intervals in)', async () => {
    const j = job('{ from: 0, to: 100, chunk: 10 }');
    const done: Interval[] = [
      { start: 50, end: 60 },
      { start: 10, end: 20 },
    ];
    const a = await planJob(j, { completed: () => done });
    const b = await planJob(j, { completed: () => [...done].reverse() });
    expect(b.units.map((u) => `${u.unitKey}#${u.windowKey}`)).toEqual(a.units.map((u) => `${u.unitKey}#${u.windowKey}`));
    const keys = a.units.map((u) => [
      u.dataset,
      u.target.targetIndex,
      u.target.kind === 'contract' ? u.target.eventIndex : 0,
      u.chainId,
      u.window.start,
    ]);
    const sorted = [...keys].sort((x, y) => {
      for (let i = 0; i < x.length; i++) {
        const d = typeof x[i] === 'number' ? (x[i] as number) - (y[i] as number) : 0;
        if (d) return d;
      }
      return 0;
    });
    // datasets in DATASETS order: transactions before events
    expect(keys[0]![0]).toBe('transactions');
    expect(keys.filter((k) => k[0] === 'transactions')).toEqual(sorted.filter((k) => k[0] === 'transactions'));
  });

  it('windowKey pads so that keys sort like numbers', () => {
    const ws = [
      { start: 9, end: 10 },
      { start: 10, end: 100 },
      { start: 100, end: 1000 },
    ];
    const keys = ws.map(windowKey);
    expect([...keys].sort()).toEqual(keys);
  });

  it('gives a changed query (filters, aggregates) a different unitKey', async () => {
    const plain = await planJob(job('{ from: 0, to: 10 }'), { completed: none });
    const filtered = await planJob(job('{ from: 0, to: 10 }', 'filters: { filter_transaction_index_lt: 5 }'), { completed: none });
    const k = (p: Plan) => p.units.find((u) => u.dataset === 'transactions')!.unitKey;
    expect(k(filtered)).not.toBe(k(plain));
    expect(k(filtered)).toMatch(new RegExp(`^transactions/${W1}~[0-9a-f]{8}/1/block$`));
  });

  it('plans an NFT holdings snapshot per UTC day, skipped once done', async () => {
    const j = parseJob(
      `name: n
source: { base_url: sandbox, chains: [1] }
targets: [{ wallet: "${W1}", datasets: [nft_holdings] }]
`,
      'jobs/n.yaml',
    );
    const now = Date.UTC(2024, 4, 5, 13, 30) / 1000;
    const plan = await planJob(j, { completed: none, now: () => now });
    expect(plan.units).toHaveLength(1);
    expect(plan.units[0]!.window).toEqual({ start: Date.UTC(2024, 4, 5) / 1000, end: Date.UTC(2024, 4, 6) / 1000 });
    const again = await planJob(j, { completed: () => [plan.units[0]!.window], now: () => now + 3600 });
    expect(again.units).toEqual([]);
  });

  it("shards split a unit's windows: every window in exactly one shard, every shard with windows of each unit", async () => {
    const plan = await planJob(job('{ from: 0, to: 100, chunk: 10 }'), { completed: none });
    const split = withSpans(emptySplit(3), uncoveredSpans(emptySplit(3), plan));
    const shards = [0, 1, 2].map((i) => selectShard(plan, split, i));
    expect(shards.reduce((n, s) => n + s.units.length, 0)).toBe(plan.units.length);
    const owner = new Map<string, number>();
    shards.forEach((s, i) =>
      s.units.forEach((u) => {
        expect(owner.has(`${u.unitKey}@${u.windowKey}`)).toBe(false);
        owner.set(`${u.unitKey}@${u.windowKey}`, i);
      }),
    );
    for (const s of shards) expect(new Set(s.units.map((u) => u.unitKey)).size).toBe(new Set(plan.units.map((u) => u.unitKey)).size);
  });
});
