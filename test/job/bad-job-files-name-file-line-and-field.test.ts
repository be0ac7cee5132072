import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { JobFileError } from '../../src/job/errors.js';
import { parseJob } from '../../src/job/load.js';

/** A valid job; each case below changes some of its lines (line numbers are those of this list). */
const BASE = [
  /*  1 */ 'name: t',
  /*  2 */ 'source:',
  /*  3 */ '  base_url: sandbox',
  /*  4 */ '  chains: [1, 8453]',
  /*  5 */ 'targets:',
  /*  6 */ '  - wallet: "0x1111111111111111111111111111111111111111"',
  /*  7 */ '  - contract: "0x2222222222222222222222222222222222222222"',
  /*  8 */ '    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]',
  /*  9 */ 'range:',
  /* 10 */ '  from: 100',
  /* 11 */ '  to: 200',
  /* 12 */ 'output:',
  /* 13 */ '  destination: ./out',
];

/** Replaces line n (1-based) by the given lines; `null` deletes it. Later lines shift. */
function variant(changes: Record<number, string | string[] | null>, base = BASE): string {
  const out: string[] = [];
  base.forEach((line, i) => {
    const c = changes[i + 1];
    if (c === undefined) out.push(line);
    else if (c !== null) out.push(...(Array.isArray(c) ? c : [c]));
  });
  return `${out.join('\n')}\n`;
}

function failure(text: string, file = 'jobs/bad.yaml'): JobFileError {
  try {
    parseJob(text, file, { cwd: '/work' });
  } catch (err) {
    if (err instanceof JobFileError) return err;
    throw err;
  }
  throw new Error('the job was accepted');
}

interface Case {
  name: string;
  text: string;
  line: number;
  column?: number;
  field: string;
  says: RegExp;
  hint?: RegExp;
}

const CASES: Case[] = [
  {
    name: 'bad YAML syntax (unclosed list)',
    text: variant({ 4: '  chains: [1, 8453', 5: '  # nothing else', 6: null, 7: null, 8: null }),
    line: 4,
    column: 11,
    field: 'source.chains',
    says: /YAML syntax error/,
  },
  {
    name: 'bad YAML syntax (a mapping line indented differently)',
    text: variant({ 11: ' to: 200' }),
    line: 11,
    field: 'range',
    says: /YAML syntax error/,
  },
  {
    name: 'bad YAML syntax (unclosed quote)',
    text: variant({ 6: '  - wallet: "0x1111111111111111111111111111111111111111' }),
    line: 6,
    column: 13,
    field: 'targets[0].wallet',
    says: /YAML syntax error: Missing closing "quote/,
  },
  {
    name: 'duplicate key',
    text: variant({ 11: ['  to: 200', '  to: 300'] }),
    line: 12,
    column: 3,
    field: 'range.to',
    says: /YAML syntax error: Map keys must be unique/,
  },
  {
    name: 'unknown key, with a did-you-mean',
    text: variant({ 13: '  destinaton: ./out' }),
    line: 13,
    column: 3,
    field: 'output.destinaton',
    says: /unknown key "destinaton"/,
    hint: /did you mean "destination"\?/,
  },
  {
    name: 'key at the wrong level',
    text: variant({ 13: ['  destination: ./out', 'chunk: 100'] }),
    line: 14,
    field: 'chunk',
    says: /unknown key "chunk"/,
    hint: /belongs under range:/,
  },
  {
    name: 'wrong type (a number where a list is expected)',
    text: variant({ 4: '  chains: 1' }),
    line: 4,
    column: 11,
    field: 'source.chains',
    says: /expected a list, got 1/,
  },
  {
    name: 'chain id out of range',
    text: variant({ 4: '  chains: [1, 0]' }),
    line: 4,
    column: 15,
    field: 'source.chains[1]',
    says: /0 is too small \(minimum 1\)/,
  },
  {
    name: 'bad address',
    text: variant({ 6: '  - wallet: "0xzz"' }),
    line: 6,
    column: 13,
    field: 'targets[0].wallet',
    says: /"0xzz" is not an address \(0x \+ 40 hex digits\)/,
  },
  {
    name: 'bad event signature',
    text: variant({ 8: '    events: ["Transfer(address from"]' }),
    line: 8,
    field: 'targets[1].events[0]',
    says: /is not a valid event signature/,
  },
  {
    name: 'bare topic hash instead of a signature',
    text: variant({ 8: '    events: ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"]' }),
    line: 8,
    field: 'targets[1].events[0]',
    says: /is not a valid event signature: a bare topic0 hash is not accepted/,
    hint: /Transfer\(address indexed from/,
  },
  {
    name: 'a function signature where an event is expected',
    text: variant({ 8: '    events: ["function transfer(address to, uint256 value)"]' }),
    line: 8,
    field: 'targets[1].events[0]',
    says: /is not a valid event signature: it is a function, not an event/,
  },
  {
    name: 'from >= to',
    text: variant({ 11: '  to: 100' }),
    line: 11,
    field: 'range.to',
    says: /is not after range.from \(100\)/,
  },
  {
    name: 'bad duration',
    text: variant({ 10: '  from: "2024-01-01"', 11: ['  to: "2024-01-03"', '  chunk: 1 day'] }),
    line: 12,
    field: 'range.chunk',
    says: /"1 day" is not a duration/,
  },
  {
    name: 'a time chunk that does not divide a day',
    text: variant({ 10: '  from: "2024-01-01"', 11: ['  to: "2024-01-03"', '  chunk: 5h'] }),
    line: 12,
    field: 'range.chunk',
    says: /does not divide a day/,
  },
  {
    name: 'a block count for a time range',
    text: variant({ 10: '  from: "2024-01-01"', 11: ['  to: "2024-01-03"', '  chunk: 1000'] }),
    line: 12,
    field: 'range.chunk',
    says: /is a number but the range counts time/,
  },
  {
    name: 'a block number and a date mixed',
    text: variant({ 11: '  to: "2024-01-03"' }),
    line: 10,
    field: 'range.from',
    says: /is a block number but range.to is a date/,
  },
  {
    name: 'a unix time without by: time',
    text: variant({ 10: '  from: 1704067200', 11: '  to: 1704153600' }),
    line: 10,
    field: 'range.from',
    says: /looks like a unix time/,
    hint: /by: time/,
  },
  {
    name: 'a date-time without a time zone',
    text: variant({ 10: '  from: "2024-01-01T00:00:00"', 11: '  to: "2024-01-02T00:00:00Z"' }),
    line: 10,
    field: 'range.from',
    says: /has no time zone/,
  },
  {
    name: 'safety_lag without to: latest',
    text: variant({ 11: ['  to: 200', '  safety_lag: 10'] }),
    line: 12,
    field: 'range.safety_lag',
    says: /only applies with to: latest/,
  },
  {
    name: 'unknown filter',
    text: variant({ 13: ['  destination: ./out', 'filters:', '  filter_valu_gte: "1"'] }),
    line: 15,
    column: 3,
    field: 'filters.filter_valu_gte',
    says: /"filter_valu_gte" is not a filter of the wallet transactions route/,
    hint: /did you mean "filter_value_gte"\?/,
  },
  {
    name: 'a filter of one route used for the other',
    text: variant({
      8: ['    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]', '    filters: { filter_value_gte: "1" }'],
    }),
    line: 9,
    field: 'targets[1].filters.filter_value_gte',
    says: /is not a filter of the contract events route/,
  },
  {
    name: 'block range filters are refused (range owns them)',
    text: variant({ 6: ['  - wallet: "0x1111111111111111111111111111111111111111"', '    filters:', '      filter_block_number_gte: 5'] }),
    line: 8,
    field: 'targets[0].filters.filter_block_number_gte',
    says: /is set by the planner from range/,
  },
  {
    name: 'bad destination',
    text: variant({ 13: '  destination: ftp://example/x' }),
    line: 13,
    column: 16,
    field: 'output.destination',
    says: /uses the unsupported scheme "ftp:\/\/"/,
  },
  {
    name: 'bad S3 bucket',
    text: variant({ 13: '  destination: s3://Bad_Bucket/x' }),
    line: 13,
    field: 'output.destination',
    says: /invalid bucket name "Bad_Bucket"/,
  },
  {
    name: 'bad byte size',
    text: variant({ 13: ['  destination: ./out', '  max_bytes_per_file: 512XB'] }),
    line: 14,
    field: 'output.max_bytes_per_file',
    says: /"512XB" is not a byte size/,
  },
  {
    name: 'bad partitioning template',
    text: variant({ 13: ['  destination: ./out', '  partitioning: "{dataset}/{chain}"'] }),
    line: 14,
    field: 'output.partitioning',
    says: /unknown placeholder \{chain\}/,
  },
  {
    name: 'NDJSON with a Parquet-only compression',
    text: variant({ 13: ['  destination: ./out', '  format: ndjson', '  compression: zstd'] }),
    line: 15,
    field: 'output.compression',
    says: /is not available for NDJSON/,
  },
  {
    name: 'missing targets',
    text: variant({ 5: null, 6: null, 7: null, 8: null }),
    line: 1,
    column: 1,
    field: 'targets',
    says: /is required \(a list\)/,
  },
  {
    name: 'empty targets list',
    text: variant({ 5: 'targets: []', 6: null, 7: null, 8: null }),
    line: 5,
    field: 'targets',
    says: /must not be empty/,
  },
  {
    name: 'a target that is neither wallet nor contract',
    text: variant({ 6: '  - walet: "0x1111111111111111111111111111111111111111"' }),
    line: 6,
    field: 'targets[0]',
    says: /needs "wallet:" .* or "contract:"/,
    hint: /did you mean "wallet"\?/,
  },
  {
    name: "a wallet target listing a chain target's dataset",
    text: variant({ 6: ['  - wallet: "0x1111111111111111111111111111111111111111"', '    datasets: [blocks]'] }),
    line: 7,
    field: 'targets[0].datasets[0]',
    says: /"blocks" is not one of "transactions"/,
  },
  {
    name: "a contract target listing a chain target's dataset",
    text: variant({ 8: ['    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]', '    datasets: [blocks]'] }),
    line: 9,
    field: 'targets[1].datasets[0]',
    says: /"blocks" is not one of "events"/,
  },
  {
    name: 'a target chain the job does not list',
    text: variant({ 6: ['  - wallet: "0x1111111111111111111111111111111111111111"', '    chains: [10]'] }),
    line: 7,
    field: 'targets[0].chains[0]',
    says: /is not one of the job's chains/,
  },
  {
    name: 'a secret in the file',
    text: variant({ 3: ['  base_url: sandbox', '  secret_key: abc'] }),
    line: 4,
    field: 'source.secret_key',
    says: /unknown key "secret_key"/,
    hint: /only from the environment/,
  },
  {
    name: 'credentials in the base URL',
    text: variant({ 3: '  base_url: "https://user:pw@example.com/v1"' }),
    line: 3,
    field: 'source.base_url',
    says: /must not contain credentials/,
  },
  {
    name: 'a number too large to be exact',
    text: variant({ 11: '  to: 123456789012345678901' }),
    line: 11,
    field: 'range.to',
    says: /too large to be exact/,
  },
];

describe('a bad job file gives a JobFileError naming file, line, column and field', () => {
  it('covers at least 12 kinds of mistake', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(12);
  });

  it.each(CASES)('$name', (c) => {
    const err = failure(c.text);
    expect(err.exitCode).toBe(ExitCode.badInput);
    const p = err.problems.find((x) => x.field === c.field);
    expect(p, `problems: ${err.message}`).toBeDefined();
    expect(p!.line).toBe(c.line);
    if (c.column !== undefined) expect(p!.column).toBe(c.column);
    expect(p!.message).toMatch(c.says);
    if (c.hint) expect(p!.hint ?? '').toMatch(c.hint);
    // The printed message carries the location and field.
    expect(err.message).toContain(`jobs/bad.yaml:${c.line}:${p!.column} ${c.field ? `${c.field}: ` : ''}`);
  });

  it('an empty file is reported at line 1', () => {
    for (const text of ['', '# only a comment\n', '\n\n']) {
      const err = failure(text, 'jobs/empty.yaml');
      expect(err.file).toBe('jobs/empty.yaml');
      expect(err.line).toBe(1);
      expect(err.message).toMatch(/^jobs\/empty\.yaml:1:1 the job file is empty/);
    }
  });

  it('a file that is not a mapping is refused', () => {
    const err = failure('- name: x\n');
    expect(err.message).toMatch(/expected a mapping of job settings/);
  });

  it('reports several problems together, in file order', () => {
    const err = failure(variant({ 4: '  chains: [1, 0]', 6: '  - wallet: "0xzz"', 13: '  destinaton: ./out' }));
    expect(err.problems.map((p) => [p.line, p.field])).toEqual([
      [4, 'source.chains[1]'],
      [6, 'targets[0].wallet'],
      [13, 'output.destinaton'],
    ]);
    expect(err.message).toMatch(/3 problems/);
    for (const p of err.problems) expect(err.message).toContain(`jobs/bad.yaml:${p.line}:${p.column} ${p.field}:`);
  });

  it('JSON job files get line numbers too', () => {
    const json = [
      /* 1 */ '{',
      /* 2 */ '  "name": "j",',
      /* 3 */ '  "source": { "base_url": "sandbox", "chains": [1] },',
      /* 4 */ '  "targets": [',
      /* 5 */ '    { "wallet": "0x12" }',
      /* 6 */ '  ],',
      /* 7 */ '  "range": { "from": 1, "to": 2 }',
      /* 8 */ '}',
    ].join('\n');
    const err = failure(json, 'jobs/bad.json');
    expect(err.line).toBe(5);
    expect(err.column).toBe(17);
    expect(err.field).toBe('targets[0].wallet');
    expect(err.message).toContain('jobs/bad.json:5:17 targets[0].wallet: "0x12" is not an address');
  });
});
