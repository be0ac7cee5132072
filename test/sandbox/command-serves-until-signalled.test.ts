import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SandboxOptionsError } from '@insight-export/sandbox';
import { sandboxOptionsFromArgs, type SandboxArgs } from '@insight-export/sandbox';

const script = fileURLToPath(new URL('./fixtures/sandbox-cli.ts', import.meta.url));

describe('insight-export sandbox command', () => {
  it('prints its URLs on stdout, serves them, and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        script,
        'sandbox',
        '--port',
        '0',
        '--transactions',
        '1000',
        '--path-prefix',
        '/v1',
        '--fault-503',
        '0',
        '--catalog-prefix',
        'cli-wh',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        const m = /^url=(\S+)$/m.exec(stdout);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(stdout).toMatch(/^explorer_url=http:\/\/127\.0\.0\.1:\d+\/api\/v2$/m);
    const res = await fetch(`${url}/resolve/alice.eth`);
    expect(res.status).toBe(200);
    const catalogUrl = /^catalog_url=(\S+)$/m.exec(stdout)?.[1];
    expect(catalogUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/iceberg$/);
    expect(await (await fetch(`${catalogUrl}/v1/config`)).json()).toMatchObject({ overrides: { prefix: 'cli-wh' } });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });

  const args = (over: Partial<SandboxArgs>): SandboxArgs => ({
    port: 0,
    host: '127.0.0.1',
    transactions: 1000,
    seed: 1,
    'latency-ms': 0,
    'jitter-ms': 0,
    'fault-500': 0,
    'fault-502': 0,
    'fault-503': 0,
    'fault-429': 0,
    'fault-reset': 0,
    'fault-truncate': 0,
    'fault-stall': 0,
    'stall-ms': 60_000,
    'fault-seed': 1,
    'path-prefix': '/insights/v1',
    'explorer-prefix': '/api/v2',
    'nft-page-size': 50,
    'duplicate-self-transfers': false,
    'legacy-types': false,
    'decoded-variants': false,
    ...over,
  });

  it('maps flags to sandbox options and reads auth from the environment', () => {
    const opts = sandboxOptionsFromArgs(args({ rps: 10, 'retry-after': 4, 'fault-500': 0.1, 'latency-ms': 5 }), {
      INSIGHT_SANDBOX_SECRET_KEY: 'sk',
    });
    expect(opts.rateLimit).toEqual({ requestsPerSecond: 10, retryAfterSeconds: 4 });
    expect(opts.faults).toMatchObject({ rates: { http500: 0.1 }, retryAfterSeconds: 4 });
    expect(opts.latency).toEqual({ fixedMs: 5, jitterMs: 0 });
    expect(opts.auth).toEqual({ clientId: undefined, secretKey: 'sk' });
  });

  it("maps the catalog's flags, its secrets from the environment only", () => {
    const opts = sandboxOptionsFromArgs(args({ 'catalog-prefix': 'p', 'catalog-commit-faults': '502, 500', 'catalog-expire-tokens': 1 }), {
      INSIGHT_SANDBOX_CATALOG_CLIENT_ID: 'id',
      INSIGHT_SANDBOX_CATALOG_CLIENT_SECRET: 'secret',
    });
    expect(opts.catalog).toEqual({
      prefix: 'p',
      commitFaults: [502, 500],
      expireTokens: 1,
      auth: { clientId: 'id', clientSecret: 'secret' },
    });
    expect(sandboxOptionsFromArgs(args({}), {}).catalog).toEqual({});
    expect(() => sandboxOptionsFromArgs(args({ 'catalog-commit-faults': '503' }), {})).toThrow(SandboxOptionsError);
  });

  it('rejects a fault rate outside 0..1 with a typed bad-input error', () => {
    expect(() => sandboxOptionsFromArgs(args({ 'fault-reset': 1.5 }), {})).toThrow(SandboxOptionsError);
  });
});
