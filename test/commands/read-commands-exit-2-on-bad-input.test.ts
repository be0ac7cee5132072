import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../datasets/export-helpers.js';
import { runCli } from '../helpers/cli-in-process.js';

const sandbox = useSandbox({ seed: 42 });
const source = () => ['--base-url', sandbox.url, '--log-level', 'silent'];
const TOKEN = () => sandbox.data.contracts.find((c) => c.chainId === 1 && c.kind === 'erc20')!.address;
const LOG = {
  topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'],
  data: '0x',
};

async function file(name: string, text: string): Promise<string> {
  const p = path.join(await tempDir(), name);
  await writeFile(p, text);
  return p;
}

async function expectBadInput(argv: string[], message: RegExp, requests: 'none' | 'some' = 'none') {
  sandbox.resetStats();
  const res = await runCli([...argv, ...source()]);
  expect(res.code, res.stderr).toBe(2);
  expect(res.stdout).toBe('');
  expect(res.stderr).toMatch(/^error: /);
  expect(res.stderr).toMatch(message);
  if (requests === 'none') expect(sandbox.stats().requests).toBe(0);
}

describe('resolve, decode and nfts refuse bad input with exit code 2 and a message naming it', () => {
  it('decode: a missing file, a file that is not JSON, a body of the wrong shape (with its JSON path), a bad address', async () => {
    await expectBadInput(
      ['decode', TOKEN(), '--file', '/nonexistent/logs.json'],
      /Cannot read the decode file \/nonexistent\/logs\.json[\s\S]*no such file/,
    );
    await expectBadInput(['decode', TOKEN(), '--file', await file('a.json', '{"logs": [')], /is not valid JSON/);
    await expectBadInput(['decode', TOKEN(), '--file', await file('b.json', '{"events": []}')], /has neither "logs" nor "transactions"/);
    const badTopic = await file('c.json', JSON.stringify({ logs: [LOG, { topics: ['0x12'], data: '0x' }] }));
    await expectBadInput(['decode', TOKEN(), '--file', badTopic], /32-byte topic[\s\S]*c\.json at \$\.logs\[1\]\.topics\[0\]/);
    const bareBad = await file('d.json', JSON.stringify([LOG, { topics: [], data: 'zz' }]));
    await expectBadInput(['decode', TOKEN(), '--file', bareBad], /d\.json at \$\[1\]\.data/);
    await expectBadInput(['decode', '0x1234', '--file', await file('e.json', JSON.stringify([LOG]))], /contract: expected an address/);
  });

  it('decode: a contract the service knows no ABI for (404) is bad input, with a hint', async () => {
    const unknown = sandbox.data.contracts.find((c) => c.kind === 'unknown')!;
    await expectBadInput(
      ['decode', unknown.address, '--file', await file('f.json', JSON.stringify([LOG]))],
      /rejected the decode request[\s\S]*no ABI[\s\S]*Hint: The service knows no ABI/,
      'some',
    );
  });

  it('resolve: input the service cannot resolve (400), and a malformed 0x input refused before sending', async () => {
    await expectBadInput(['resolve', 'not a thing'], /The service rejected the input "not a thing"/, 'some');
    await expectBadInput(['resolve', '0x1234'], /a 0x input must be a selector/);
  });

  it('nfts: several chains, a malformed address, an unknown type; --chain must be positive', async () => {
    await expectBadInput(['nfts', sandbox.data.wallets[0]!.address, '--chain', '1', '--chain', '8453'], /nfts reads one chain at a time/);
    await expectBadInput(['nfts', '0xabc', '--chain', '1'], /Not a wallet address or name/);
    await expectBadInput(['nfts', sandbox.data.wallets[0]!.address, '--type', 'ERC-20'], /Invalid values[\s\S]*type/);
    await expectBadInput(['resolve', '1', '--chain', '-3'], /--chain takes positive integer chain ids/);
  });
});
