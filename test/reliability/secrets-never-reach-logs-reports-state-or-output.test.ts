/**
 * Secrets: runs with an API key pair (INSIGHT_CLIENT_ID / INSIGHT_SECRET_KEY, which the sandbox
 * requires) and AWS credentials (the S3 test server), logging at trace, succeeding and failing
 * (wrong API key, wrong AWS secret, service faults), plus plan / verify / resolve: neither secret
 * appears in stdout, stderr, the data files, the state, the reports or the staging folder.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { downloadPrefix, listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { s3TestEnv, useTestBucket } from '../helpers/s3.js';
import { runCli, writeJob, useTestCli, type CliResult } from './harness.js';

const CLIENT_ID = 'cid-5f2c91d7e0a84b3f9c6e2d1a';
const SECRET_KEY = 'sk-Q8v2Lm4Xz9Rt1Wp7Hc3Jn6Bd0Kf5Gs8Ya2Ue4';
const sandbox = useSandbox({ auth: { clientId: CLIENT_ID, secretKey: SECRET_KEY } });
const bucket = useTestBucket('secrets');
const work = useTestCli('secrets-');

/** Every readable form of every file under root: raw bytes as text, gunzipped when gzip. */
async function contents(root: string): Promise<{ file: string; text: string }[]> {
  const out: { file: string; text: string }[] = [];
  for (const rel of listFiles(root)) {
    const bytes = await readFile(join(root, rel));
    out.push({ file: rel, text: bytes.toString('latin1') });
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) out.push({ file: `${rel} (gunzipped)`, text: gunzipSync(bytes).toString('utf8') });
  }
  return out;
}

function forms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex'), encodeURIComponent(secret)];
}

it('no secret in logs, reports, state, output or staging, whether runs succeed or fail', { timeout: 180_000 }, async () => {
  const s3 = await s3TestEnv();
  const secrets = [CLIENT_ID, SECRET_KEY, s3.AWS_SECRET_ACCESS_KEY!, s3.AWS_ACCESS_KEY_ID!];
  const base = join(work.dir, 'job');
  const staging = join(base, 'staging');
  const local = join(base, 'out');
  const job = (destination: string) => ({
    name: 'secrets',
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [{ wallet: 'alice.eth', datasets: ['transactions', 'nft_holdings'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    output: { format: 'ndjson', destination },
  });
  const s3Job = await writeJob(base, job(`s3://${bucket.bucket}/secrets`), 's3.yaml');
  const localJob = await writeJob(base, job(local), 'local.yaml');
  const keys = { INSIGHT_CLIENT_ID: CLIENT_ID, INSIGHT_SECRET_KEY: SECRET_KEY };
  const env = { ...keys, ...s3 };
  const trace = ['--log-level', 'trace', '--staging-dir', staging];
  const runs: [string, CliResult][] = [];
  const run = async (name: string, args: string[], e: Record<string, string>, expectCode: number | null) => {
    const r = await runCli(work.cli, args, { env: e });
    if (expectCode !== null) expect(r.code, `${name}\n${r.stderr.slice(-2000)}`).toBe(expectCode);
    runs.push([name, r]);
    return r;
  };

  // Succeeding runs (S3 and local), with the API keys required by the service.
  await run('run s3', ['run', s3Job, ...trace, '--json'], env, 0);
  await run('run local', ['run', localJob, ...trace, '--json'], env, 0);
  await run('plan', ['plan', s3Job, ...trace, '--json'], env, 0);
  await run('verify', ['verify', s3Job, ...trace, '--json'], env, 0);
  await run('resolve', ['resolve', 'alice.eth', '--base-url', sandbox.url, '--log-level', 'trace'], env, null);
  // Failing runs: a wrong API secret (401), a wrong AWS secret (403), faults with retries logged.
  const wrongKeys = await run(
    'run wrong api keys',
    ['run', localJob, ...trace, '--force'],
    { ...env, INSIGHT_CLIENT_ID: `${CLIENT_ID}x`, INSIGHT_SECRET_KEY: `${SECRET_KEY}x` },
    2,
  ); // 401: configuration (README: exit 2)
  expect(wrongKeys.stdout + wrongKeys.stderr).toMatch(/401/);
  await run(
    'run wrong aws secret',
    ['run', s3Job, ...trace, '--force'],
    { ...env, AWS_SECRET_ACCESS_KEY: `${s3.AWS_SECRET_ACCESS_KEY}x` },
    2,
  ); // S3 access denied: credentials (README: exit 2)
  sandbox.setFaults({ rates: { http500: 0.3, http429: 0.2, reset: 0.1 }, retryAfterSeconds: 0, seed: 7 });
  await run('run with faults', ['run', localJob, ...trace, '--force', '--max-attempts', '2'], env, null);
  sandbox.setFaults(null);
  // The API keys were really used: without them the service refuses.
  const refused = await run('run without api keys', ['run', localJob, '--log-level', 'error', '--force'], s3, null);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr + refused.stdout).toMatch(/401/);

  const downloaded = join(base, 'downloaded');
  await downloadPrefix(bucket.client, bucket.bucket, 'secrets', downloaded);
  const places = [
    ...runs.flatMap(([name, r]) => [
      { file: `${name}: stdout`, text: r.stdout },
      { file: `${name}: stderr`, text: r.stderr },
    ]),
    ...(await contents(downloaded)).map((c) => ({ ...c, file: `s3: ${c.file}` })),
    ...(await contents(local)).map((c) => ({ ...c, file: `local: ${c.file}` })),
    ...(await contents(staging)).map((c) => ({ ...c, file: `staging: ${c.file}` })),
  ];
  const leaks: string[] = [];
  for (const p of places)
    for (const s of secrets)
      for (const f of forms(s))
        if (p.text.includes(f)) leaks.push(`${p.file} contains ${s === f ? '' : 'an encoding of '}${s.slice(0, 4)}…`);
  expect(leaks).toEqual([]);
  const logLines = runs.reduce((n, [, r]) => n + r.stderr.split('\n').filter((l) => l.startsWith('{')).length, 0);
  const bytes = places.reduce((n, p) => n + p.text.length, 0);
  const s3Files = places.filter((p) => p.file.startsWith('s3:')).length;
  console.log(
    `[secrets] ${runs.length} runs (${runs.map(([n, r]) => `${n}: ${r.code}`).join(', ')}); searched ${places.length} outputs/files ` +
      `(${logLines} log lines at trace, ${s3Files} S3 objects, ${(bytes / 1e6).toFixed(1)} MB) for ${secrets.length} secrets in 4 encodings: no leak`,
  );
  expect(logLines).toBeGreaterThan(20);
  expect(s3Files).toBeGreaterThan(5);
});
