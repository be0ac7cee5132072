/**
 * Issue 14.7: when the service cannot be reached, or answers 404 because the base URL's path
 * prefix is wrong, the message points at the base URL (not at the input, not at the request
 * rate), and a 404 exits 2 (configuration: a scheduler must not retry it).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { writeFile } from 'node:fs/promises';
import { runCli } from '../helpers/cli-in-process.js';
import { freePort } from '../helpers/free-port.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('base-url-');

/** The sandbox's URL with the hosted service's prefix (/v1) instead of its own (/insights/v1). */
const wrongPrefix = () => sandbox.url.replace('/insights/v1', '/v1');

async function jobFile(): Promise<string> {
  const file = join(tmp.dir, 'job.yaml');
  await writeFile(
    file,
    stringify({
      name: 'base-url',
      source: { chains: [1] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      output: { destination: join(tmp.dir, 'out') },
    }),
  );
  return file;
}

describe('a base URL with the wrong path prefix', () => {
  it('run: exit 2, and the hint names the path prefix of the base URL', async () => {
    const r = await runCli(['run', await jobFile(), '--base-url', wrongPrefix(), '--log-level', 'silent']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/HTTP 404/);
    expect(r.stderr).toMatch(/Hint: .*path prefix of the base URL/);
  });

  it('resolve of a name: exit 2 about the base URL, not "the service rejected the name"', async () => {
    const r = await runCli(['resolve', 'alice.eth', '--base-url', wrongPrefix()]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/rejected/);
    expect(r.stderr).toMatch(/path prefix of the base URL/);
  });

  it('a job naming a wallet by name: the name is not blamed', async () => {
    const file = join(tmp.dir, 'named.yaml');
    await writeFile(
      file,
      stringify({
        name: 'named',
        source: { chains: [1] },
        targets: [{ wallet: 'alice.eth' }],
        range: { from: '2024-02-01', to: '2024-02-02' },
        output: { destination: join(tmp.dir, 'named') },
      }),
    );
    const r = await runCli(['run', file, '--base-url', wrongPrefix(), '--log-level', 'silent']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/does not resolve/);
    expect(r.stderr).toMatch(/path prefix of the base URL/);
  });

  it('an unknown name on the right server is still the input', async () => {
    const r = await runCli(['resolve', 'nobody-here.eth', '--base-url', sandbox.url]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/rejected the input/);
  });
});

describe('a base URL where nothing listens', () => {
  it('run: the hint is about the URL and the server, not the request rate', async () => {
    const url = `http://127.0.0.1:${await freePort()}/insights/v1`;
    const r = await runCli(['run', await jobFile(), '--base-url', url, '--max-attempts', '2', '--log-level', 'silent']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/ECONNREFUSED/);
    expect(r.stderr).toMatch(/Hint: Nothing accepts connections at http:\/\/127\.0\.0\.1:\d+: check the host and port of the base URL/);
    expect(r.stderr).not.toMatch(/request rate/);
  });
});
