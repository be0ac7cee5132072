/**
 * A chain target (datasets of the chains themselves, no wallet or contract) plans one unit per
 * chain and window with no filters; a job whose range counts an axis one of its datasets does not
 * take (blocks by time), a second chain target, or a wallet dataset on a chain target are refused
 * naming file, line and field.
 */
import { describe, expect, it } from 'vitest';
import { JobFileError } from '../../src/job/errors.js';
import { parseJob } from '../../src/job/load.js';
import { jobStreams } from '../../src/plan/streams.js';

function text(targets: string[], range = 'range: { from: 100, to: 200 }'): string {
  return [
    'name: t',
    'source: { base_url: sandbox, chains: [1, 8453] }',
    'filters: { filter_value_gte: 1 }',
    'targets:',
    ...targets,
    range,
    '',
  ].join('\n');
}

function problems(source: string): { line: number; field: string; message: string }[] {
  try {
    parseJob(source, 'jobs/bad.yaml', { cwd: '/work' });
  } catch (err) {
    if (err instanceof JobFileError) return err.problems.map((p) => ({ line: p.line, field: p.field, message: p.message }));
    throw err;
  }
  throw new Error('the job was accepted');
}

describe('a chain target', () => {
  it('plans its datasets per chain without a wallet or contract, and takes no filters', () => {
    const job = parseJob(text(['  - datasets: [blocks]', '    chains: [8453]']), 'jobs/blocks.yaml', { cwd: '/work' });
    expect(job.targets).toEqual([{ kind: 'chain', index: 0, datasets: ['blocks'], chains: [8453], filters: {} }]);
    expect(jobStreams(job).map((s) => s.unitKey)).toEqual(['blocks/chain/8453/block']);
  });

  it('is refused a range by time, a second chain target, and a wallet dataset', () => {
    expect(problems(text(['  - datasets: [blocks]'], 'range: { from: "2024-02-01", to: "2024-02-02" }'))).toEqual([
      { line: 6, field: 'range', message: 'counts time but blocks takes block ranges only' },
    ]);
    expect(problems(text(['  - datasets: [blocks]', '    chains: [1]', '  - datasets: [blocks]', '    chains: [8453]']))).toEqual([
      { line: 7, field: 'targets[1]', message: 'is a second chain target: targets[0] is one' },
    ]);
    const wallet = problems(text(['  - datasets: [transactions]']));
    expect(wallet).toHaveLength(1);
    expect(wallet[0]!.field).toMatch(/^targets\[0\]/);
  });
});
