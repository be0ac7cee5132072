/**
 * Issue 3: bad job files (and bad flags) given to `insight-export run` end with a clear error that
 * names the file/line/field (or the request), exit code 2, and nothing at the destination — no
 * data file, no state, not even the folder — including mistakes only found while running (a
 * name that does not resolve).
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';

const tmp = useTempDir('cli-bad-jobs-');

/** A valid job (the sandbox, one wallet, one day) writing to `dest`; cases change one thing. */
function validJob(dest: string): string {
  return [
    /*  1 */ 'name: bad-job-test',
    /*  2 */ 'source:',
    /*  3 */ '  base_url: sandbox',
    /*  4 */ '  chains: [1]',
    /*  5 */ 'targets:',
    /*  6 */ `  - wallet: "${ALICE}"`,
    /*  7 */ '    datasets: [transactions]',
    /*  8 */ 'range:',
    /*  9 */ '  from: "2024-02-01"',
    /* 10 */ '  to: "2024-02-02"',
    /* 11 */ '  chunk: 1d',
    /* 12 */ 'output:',
    /* 13 */ `  destination: ${dest}`,
    '',
  ].join('\n');
}

/** Replaces whole lines (1-based) of the valid job; an array value becomes several lines. */
function edit(text: string, lines: Record<number, string | string[]>): string {
  const out = text.split('\n');
  for (const [n, v] of Object.entries(lines).sort(([a], [b]) => Number(b) - Number(a))) {
    out.splice(Number(n) - 1, 1, ...(Array.isArray(v) ? v : [v]));
  }
  return out.join('\n');
}

interface Case {
  name: string;
  /** The job file text for a destination folder; null = no job file at all. */
  job: ((dest: string) => string) | null;
  args?: (dest: string) => string[];
  /** What the error must say (file:line and field, or the value at fault). */
  message: RegExp[];
  /** Text that must not appear in the output (a credential). */
  secret?: string;
}

const CASES: Case[] = [
  {
    name: 'YAML syntax error (unclosed list)',
    job: (d) => edit(validJob(d), { 4: '  chains: [1, 8453' }),
    message: [/job\.yaml:4:\d+/, /chains|flow|bracket|\[/i],
  },
  {
    name: 'unknown key (typo)',
    job: (d) => edit(validJob(d), { 5: 'targts:' }),
    message: [/job\.yaml:5:1/, /targts/, /targets/],
  },
  {
    name: 'bad wallet address',
    job: (d) => edit(validJob(d), { 6: '  - wallet: "0x1234"' }),
    message: [/job\.yaml:6:\d+/, /targets\[0\]\.wallet/, /0x1234/],
  },
  {
    name: 'event signature that does not parse',
    job: (d) => edit(validJob(d), { 6: `  - contract: "${ALICE}"`, 7: '    events: ["Transfer(address indexed from, address to"]' }),
    message: [/job\.yaml:7:\d+/, /targets\[0\]\.events\[0\]/],
  },
  {
    name: 'range.from after range.to',
    job: (d) => edit(validJob(d), { 9: '  from: "2024-02-03"' }),
    message: [/job\.yaml:\d+:\d+/, /range/, /from|to/],
  },
  {
    name: 'time chunk that does not divide a day',
    job: (d) => edit(validJob(d), { 11: '  chunk: 7h' }),
    message: [/job\.yaml:11:\d+/, /range\.chunk/],
  },
  {
    name: 'target chain the job does not list',
    job: (d) => edit(validJob(d), { 7: ['    datasets: [transactions]', '    chains: [10]'] }),
    message: [/job\.yaml:8:\d+/, /targets\[0\]\.chains/, /10/],
  },
  {
    name: 'secret key written in the file',
    job: (d) => edit(validJob(d), { 3: ['  base_url: sandbox', '  secret_key: sk-live-0123456789'] }),
    message: [/job\.yaml:4:\d+/, /secret_key/, /environment|INSIGHT_SECRET_KEY/],
    secret: 'sk-live-0123456789',
  },
  {
    name: 'credentials in the base URL',
    job: (d) => edit(validJob(d), { 3: '  base_url: "https://user:hunter2pass@insight.example.com/v1"' }),
    message: [/job\.yaml:3:\d+/, /source\.base_url/],
    secret: 'hunter2pass',
  },
  {
    name: 'S3 destination with credentials in it',
    job: (d) => edit(validJob(d), { 13: '  destination: s3://AKIAEXAMPLEKEY:wJalrXUtnFEMIsecret@my-bucket/insight' }),
    message: [/job\.yaml:13:\d+/, /output\.destination/, /credentials/],
    secret: 'wJalrXUtnFEMIsecret',
  },
  {
    name: 'NDJSON with a Parquet-only compression',
    job: (d) => edit(validJob(d), { 13: [`  destination: ${d}`, '  format: ndjson', '  compression: zstd'] }),
    message: [/job\.yaml:15:\d+/, /compression/, /zstd/],
  },
  {
    name: 'unsupported destination scheme',
    job: (d) => edit(validJob(d), { 13: '  destination: ftp://files.example.com/out' }),
    message: [/job\.yaml:13:\d+/, /output\.destination/, /ftp/],
  },
  {
    name: 'ABI file that does not exist',
    job: (d) =>
      edit(validJob(d), {
        6: `  - contract: "${ALICE}"`,
        7: ['    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]', '    abi: ./no-such-abi.json'],
      }),
    message: [/job\.yaml:8:\d+/, /abi/, /no-such-abi\.json/],
  },
  {
    name: 'empty job file',
    job: () => '# nothing here\n',
    message: [/job\.yaml:1:\d+/],
  },
  {
    name: 'job file that does not exist',
    job: null,
    message: [/missing\.yaml/, /no such file/],
  },
  {
    name: 'wallet name that does not resolve (found while running)',
    job: (d) => edit(validJob(d), { 6: '  - wallet: nobody-at-all.eth' }),
    message: [/nobody-at-all\.eth/, /does not resolve|resolve/i, /targets\[0\]\.wallet/],
  },
  {
    name: 'a wallet name and its address as two targets (found while running)',
    job: (d) => edit(validJob(d), { 7: ['    datasets: [transactions]', '  - wallet: alice.eth', '    datasets: [transactions]'] }),
    message: [/alice\.eth/, /already targets\[0\]/, /targets\[1\]\.wallet/],
  },
  {
    name: 'bad --format flag',
    job: (d) => validJob(d),
    args: () => ['--format', 'csv'],
    message: [/format/, /csv/],
  },
  {
    name: 'bad --max-rows-per-file flag',
    job: (d) => validJob(d),
    args: () => ['--max-rows-per-file', '0'],
    message: [/--max-rows-per-file/, /whole number/],
  },
];

function contents(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : [];
}

describe('insight-export run with a bad job', () => {
  it('covers at least 10 kinds of bad job file', () => {
    expect(CASES.filter((c) => !c.args).length).toBeGreaterThanOrEqual(10);
  });

  it('the valid job the cases are derived from runs and writes (so "nothing written" below means something)', async () => {
    const dir = join(tmp.dir, 'valid');
    const dest = join(dir, 'out');
    const file = join(dir, 'job.yaml');
    rmSync(dir, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    writeFileSync(file, validJob(dest));
    const r = await runCli(['run', file, '--log-level', 'silent']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(contents(dest).some((f) => f.endsWith('.parquet'))).toBe(true);
    expect(contents(dest).some((f) => f.startsWith('_state'))).toBe(true);
  });

  it.each(CASES)('$name: exit 2, a located message, nothing at the destination', async (c) => {
    const dir = join(tmp.dir, c.name.replace(/\W+/g, '-'));
    const dest = join(dir, 'out');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    const file = c.job ? join(dir, 'job.yaml') : join(dir, 'missing.yaml');
    if (c.job) writeFileSync(file, c.job(dest));
    const r = await runCli(['run', file, '--log-level', 'silent', ...(c.args?.(dest) ?? [])]);

    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: /);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /); // a typed error, no stack trace
    for (const m of c.message) expect(r.stderr).toMatch(m);
    if (c.secret) expect(r.stderr + r.stdout).not.toContain(c.secret);
    expect(r.stdout).toBe('');
    expect(contents(dest)).toEqual([]);
  });
});
