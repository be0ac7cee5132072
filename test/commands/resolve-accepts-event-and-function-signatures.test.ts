/**
 * Issue 14.9: `resolve "Transfer(address,address,uint256)"` works as --help says (signatures are
 * accepted): an event signature resolves through its topic0, a function signature through its selector.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });

describe('resolve of a signature', () => {
  it('an event signature (types only, or with names and indexed) lists its events', async () => {
    for (const sig of ['Transfer(address,address,uint256)', 'Transfer(address indexed from, address indexed to, uint256 value)']) {
      const r = await runCli(['resolve', sig, '--chain', '1', '--json', '--base-url', sandbox.url]);
      expect(r.code, r.stderr).toBe(0);
      const body = JSON.parse(r.stdout) as { data: { type: string; events: { topics: string[] }[] } };
      expect(body.data.type).toBe('event_signature');
      expect(body.data.events.length).toBeGreaterThan(0);
      expect(body.data.events.every((e) => e.topics[0] === '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef')).toBe(
        true,
      );
    }
  });

  it('a function signature lists transactions calling it', async () => {
    const r = await runCli(['resolve', 'transfer(address,uint256)', '--chain', '1', '--json', '--base-url', sandbox.url]);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as { data: { type: string; transactions: { function_selector: string }[] } };
    expect(body.data.type).toBe('function_signature');
    expect(body.data.transactions.length).toBeGreaterThan(0);
    expect(body.data.transactions.every((t) => t.function_selector === '0xa9059cbb')).toBe(true);
  });
});
