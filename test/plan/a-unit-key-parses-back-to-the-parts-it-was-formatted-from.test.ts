/**
 * The unit key (src/plan/stream-key.ts) is written by the planner and read back by state, verify,
 * recount, the report and the shards: every key the planner makes parses back to its parts and
 * formats to itself again, and text that is not a unit key parses to null.
 */
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/load.js';
import { jobStreams } from '../../src/plan/streams.js';
import { formatStreamKey, isSnapshotStream, keyAcrossChains, parseStreamKey } from '../../src/plan/stream-key.js';

const W1 = '0x1111111111111111111111111111111111111111';
const C1 = '0x2222222222222222222222222222222222222222';

const job = parseJob(
  `name: k
source: { base_url: sandbox, chains: [1, 8453] }
targets:
  - wallet: "${W1}"
    datasets: [transactions, nft_holdings]
  - contract: "${C1}"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
range: { from: 0, to: 100, by: block }
filters: { filter_transaction_index_lt: 5 }
`,
  'jobs/k.yaml',
);

describe('unit keys', () => {
  const specs = jobStreams(job);

  it('every key the planner makes parses to its dataset, target, variant, chain and axis, and formats back to itself', () => {
    expect(specs.length).toBeGreaterThan(4);
    for (const spec of specs) {
      const unit = parseStreamKey(spec.unitKey);
      expect(unit).toMatchObject({ dataset: spec.dataset, target: spec.targetKey, chainId: spec.chainId });
      expect(formatStreamKey({ ...unit!, dataset: spec.dataset })).toBe(spec.unitKey);
    }
    const filtered = parseStreamKey(specs.find((s) => s.dataset === 'transactions')!.unitKey)!;
    expect(filtered.variant).toMatch(/^[0-9a-f]{8}$/);
    expect(filtered.axis).toBe('block');
    const holdings = parseStreamKey(specs.find((s) => s.dataset === 'nft_holdings')!.unitKey)!;
    expect([holdings.axis, isSnapshotStream(holdings), isSnapshotStream(filtered)]).toEqual(['time', true, false]);
  });

  it('the units of one query on several chains share their key across chains, and only they', () => {
    const across = new Map<string, number[]>();
    for (const spec of specs) {
      const key = keyAcrossChains(parseStreamKey(spec.unitKey)!);
      across.set(key, [...(across.get(key) ?? []), spec.chainId]);
    }
    expect([...across.values()]).toEqual(Array.from({ length: specs.length / 2 }, () => [1, 8453]));
  });

  it('text that is not a unit key parses to null', () => {
    for (const text of ['', 'transactions', `transactions/${W1}/1`, `transactions/${W1}/x/block`, `transactions/${W1}/1/day`]) {
      expect(parseStreamKey(text)).toBeNull();
    }
  });
});
