/**
 * Issue 31.10: `tables:` names a dataset's table (a folder and a warehouse identifier). A name that
 * is not a safe lowercase identifier, too long, or given for a dataset the target does not export
 * is refused like every job-file mistake: exit 2, naming file, line and field.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { JobFileError } from '../../src/job/errors.js';
import { parseJob } from '../../src/job/load.js';

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

function job(walletTables: string, eventTables: string): string {
  return [
    /* 1 */ 'name: t',
    /* 2 */ 'source: { base_url: sandbox, chains: [1] }',
    /* 3 */ 'targets:',
    /* 4 */ '  - wallet: "0x1111111111111111111111111111111111111111"',
    /* 5 */ `    tables: ${walletTables}`,
    /* 6 */ '  - contract: "0x2222222222222222222222222222222222222222"',
    /* 7 */ '    events:',
    /* 8 */ `      - signature: "${TRANSFER}"`,
    /* 9 */ `        tables: ${eventTables}`,
    /* 10 */ 'range: { from: 100, to: 200 }',
    '',
  ].join('\n');
}

function failure(text: string): JobFileError {
  try {
    parseJob(text, 'jobs/bad.yaml', { cwd: '/work' });
  } catch (err) {
    if (err instanceof JobFileError) return err;
    throw err;
  }
  throw new Error('the job was accepted');
}

const CASES = [
  {
    name: 'upper case',
    text: job('{ transactions: Wallet_Txs }', '{ events: transfers }'),
    line: 5,
    field: 'targets[0].tables.transactions',
    says: /is not a table name/,
  },
  {
    name: 'starting with a digit',
    text: job('{ transactions: txs }', '{ events: 1transfers }'),
    line: 9,
    field: 'targets[1].events[0].tables.events',
    says: /is not a table name/,
  },
  {
    name: 'a path',
    text: job('{ transactions: "../txs" }', '{ events: transfers }'),
    line: 5,
    field: 'targets[0].tables.transactions',
    says: /is not a table name/,
  },
  {
    name: 'too long',
    text: job(`{ transactions: t${'x'.repeat(63)} }`, '{ events: transfers }'),
    line: 5,
    field: 'targets[0].tables.transactions',
    says: /too long \(at most 63/,
  },
  {
    name: 'a dataset the target does not export',
    text: job('{ transactions: txs }', '{ aggregates: daily }'),
    line: 9,
    field: 'targets[1].events[0].tables.aggregates',
    says: /which this target does not export/,
  },
];

describe('a bad table name is refused naming file, line and field', () => {
  it.each(CASES)('$name', (c) => {
    const err = failure(c.text);
    expect(err.exitCode).toBe(ExitCode.badInput);
    const p = err.problems.find((x) => x.field === c.field);
    expect(p, `problems: ${err.message}`).toBeDefined();
    expect(p!.line).toBe(c.line);
    expect(p!.message).toMatch(c.says);
    expect(err.message).toContain(`jobs/bad.yaml:${c.line}:`);
  });

  it('a good name and a plain signature string are both accepted', () => {
    const j = parseJob(job('{ transactions: wallet_txs }', '{ events: transfers }'), 'jobs/ok.yaml', { cwd: '/work' });
    const [w, c] = j.targets;
    expect(w!.kind === 'wallet' && w!.tables).toEqual({ transactions: 'wallet_txs' });
    expect(c!.kind === 'contract' && c!.events[0]!.tables).toEqual({ events: 'transfers' });
  });
});
