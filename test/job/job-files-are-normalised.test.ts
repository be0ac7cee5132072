import path from 'node:path';
import { keccak256, toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/load.js';
import type { ContractTarget, WalletTarget } from '../../src/job/schema.js';

const HEAD = `name: n
source:
  base_url: sandbox
  chains: [1, 8453]
`;

function job(body: string, file = 'jobs/j.yaml') {
  return parseJob(HEAD + body, file, { cwd: '/work/main' });
}

describe('job files come out normalised', () => {
  it('lowercases addresses, keeps unquoted 0x addresses exact, and defaults datasets', () => {
    const j = job(`targets:
  - wallet: 0x00Abcdef0123456789abcDef0123456789ABcDef
  - contract: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
    events: ["Transfer(address indexed from, address indexed to, uint value)"]
range: { from: 1, to: 2 }
`);
    const w = j.targets[0] as WalletTarget;
    const c = j.targets[1] as ContractTarget;
    expect(w.wallet).toBe('0x00abcdef0123456789abcdef0123456789abcdef');
    expect(w.datasets).toEqual(['transactions']);
    expect(c.contract).toBe('0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48');
    expect(c.datasets).toEqual(['events']);
    expect(w.chains).toEqual([1, 8453]);
  });

  it('parses event signatures: canonical types, topic0 = keccak of the types-only form', () => {
    const j = job(`targets:
  - contract: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
    events: ["Transfer(address indexed from, address indexed to, uint value)"]
range: { from: 1, to: 2 }
`);
    const e = (j.targets[0] as ContractTarget).events[0]!;
    expect(e.signature).toBe('Transfer(address indexed from, address indexed to, uint256 value)');
    expect(e.canonical).toBe('Transfer(address,address,uint256)');
    expect(e.topic0).toBe(keccak256(toHex('Transfer(address,address,uint256)')));
  });

  it('warns (located) about events with no indexed parameter', () => {
    const j = job(`targets:
  - contract: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
    events:
      - "Transfer(address from, address to, uint256 value)"
range: { from: 1, to: 2 }
`);
    expect(j.warnings).toHaveLength(1);
    expect(j.warnings[0]!.line).toBe(8);
    expect(j.warnings[0]!.field).toBe('targets[0].events[0]');
  });

  it('applies the range axis rule: integers are blocks, dates are time, by: time makes integers seconds', () => {
    const blocks = job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: 19000000, to: latest }
`);
    expect(blocks.range).toEqual({ by: 'block', from: 19_000_000, to: 'latest', safety_lag: 64, chunk: 10_000 });

    const dates = job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: "2024-01-01", to: "2024-01-02T12:00:00+02:00", chunk: 6h }
`);
    expect(dates.range).toEqual({
      by: 'time',
      from: Date.UTC(2024, 0, 1) / 1000,
      to: Date.UTC(2024, 0, 2, 10) / 1000,
      safety_lag: 900,
      chunk: 21_600,
    });

    const seconds = job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { by: time, from: 1704067200, to: latest, safety_lag: 10m, chunk: 1d }
`);
    expect(seconds.range).toEqual({ by: 'time', from: 1_704_067_200, to: 'latest', safety_lag: 600, chunk: 86_400 });

    const explicitBlocks = job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { by: block, from: 1704067200, to: 1704077200 }
`);
    expect(explicitBlocks.range?.by).toBe('block');
  });

  it('keeps big filter values exact (unquoted integers above 2^53 are not rounded) and pads topic addresses', () => {
    const j = job(`targets:
  - wallet: "0x1111111111111111111111111111111111111111"
    filters: { filter_value_gte: 1000000000000000000001 }
  - contract: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
    filters: { filter_topic_1: "0x000000000000000000000000000000000000dEaD" }
range: { from: 1, to: 2 }
`);
    expect(j.targets[0]!.filters).toEqual({ filter_value_gte: '1000000000000000000001' });
    expect(j.targets[1]!.filters).toEqual({ filter_topic_1: `0x${'dead'.padStart(64, '0')}` });
  });

  it('merges job-level filters into each target of a matching route', () => {
    const j = job(`targets:
  - wallet: "0x1111111111111111111111111111111111111111"
  - wallet: "0x2222222222222222222222222222222222222222"
    filters: { filter_gas_gte: 21000 }
filters: { filter_value_gte: "5" }
range: { from: 1, to: 2 }
`);
    expect(j.targets[0]!.filters).toEqual({ filter_value_gte: '5' });
    expect(j.targets[1]!.filters).toEqual({ filter_value_gte: '5', filter_gas_gte: '21000' });
  });

  it('normalises output settings: destination, byte sizes, durations', () => {
    const j = job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: 1, to: 2 }
output:
  destination: ./out/x
  max_bytes_per_file: 256MiB
retries: { timeout: 1m30s }
`);
    expect(j.output.destination).toEqual({ kind: 'local', path: '/work/main/out/x', url: '/work/main/out/x' });
    expect(j.output.max_bytes_per_file).toBe(256 * 1024 * 1024);
    expect(j.retries.timeout_ms).toBe(90_000);

    const s3 = job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: 1, to: 2 }
output: { destination: "s3://my-bucket/raw/insight/" }
`);
    expect(s3.output.destination).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: 'raw/insight', url: 's3://my-bucket/raw/insight' });
  });

  it('resolves ABI paths relative to the job file and records the job file', () => {
    const j = job(
      `targets:
  - contract: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
    abi: ./abi/erc20.json
range: { from: 1, to: 2 }
`,
      'jobs/sub/j.yaml',
    );
    expect((j.targets[0] as ContractTarget).abi).toBe(path.resolve('/work/main/jobs/sub/abi/erc20.json'));
    expect(j.jobFile).toBe('jobs/sub/j.yaml');
  });

  it('needs no range when every dataset is nft_holdings, and requires one otherwise', () => {
    const j = job(`targets:
  - wallet: alice.eth
    datasets: [nft_holdings]
`);
    expect(j.range).toBeNull();
    expect((j.targets[0] as WalletTarget).isName).toBe(true);
    expect(() => job(`targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]\n`)).toThrow(/range: is required/);
  });
});
