import { inspect } from 'node:util';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { describeConfig, resolveConfig } from '../../src/config/resolve.js';
import { Secret } from '../../src/config/secret.js';
import { createLogger } from '../../src/log.js';

const CLIENT_ID = 'client-id-7f3a9c';
const SECRET_KEY = 'sk-live-0123456789abcdef';

describe('secrets from the environment never appear in config output', () => {
  const cfg = resolveConfig({ env: { INSIGHT_CLIENT_ID: CLIENT_ID, INSIGHT_SECRET_KEY: SECRET_KEY }, configFile: null });

  it('are available to the code that sets the header', () => {
    expect(cfg.auth.clientId?.reveal()).toBe(CLIENT_ID);
    expect(cfg.auth.secretKey?.reveal()).toBe(SECRET_KEY);
  });

  it.each([
    ['describeConfig', () => describeConfig(cfg)],
    ['JSON.stringify', () => JSON.stringify(cfg)],
    ['util.inspect', () => inspect(cfg, { depth: 10, showHidden: true })],
    ['String / template', () => `${String(cfg.auth.secretKey)} ${cfg.auth.clientId}`],
    ['Object.entries', () => JSON.stringify(Object.entries(cfg.auth.secretKey!))],
  ])('%s', (_, render) => {
    const text = render();
    expect(text).not.toContain(SECRET_KEY);
    expect(text).not.toContain(CLIENT_ID);
  });

  it('describeConfig says a secret is set and where it came from', () => {
    const text = describeConfig(cfg);
    expect(text).toMatch(/auth\.secret_key\s+\[redacted\]\s+\[env INSIGHT_SECRET_KEY\]/);
    expect(describeConfig(resolveConfig({ env: {}, configFile: null }))).toMatch(/auth\.secret_key\s+\(not set\)/);
  });

  it('a logged config does not carry them', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger({ destination: sink, pretty: false, level: 'info' });
    log.info({ config: cfg, auth: cfg.auth }, 'resolved');
    const out = lines.join('');
    expect(out).toContain('resolved');
    expect(out).not.toContain(SECRET_KEY);
    expect(out).not.toContain(CLIENT_ID);
  });

  it('Secret is [redacted] however it is turned into text', () => {
    const s = new Secret('hunter2');
    expect(JSON.stringify({ s })).toBe('{"s":"[redacted]"}');
    expect(`${s}`).toBe('[redacted]');
    expect(inspect(s)).toBe('[redacted]');
    expect(Object.keys(s)).toEqual([]);
    expect(s.reveal()).toBe('hunter2');
  });
});
