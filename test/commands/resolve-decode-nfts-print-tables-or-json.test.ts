import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../datasets/export-helpers.js';
import { runCli } from '../helpers/cli-in-process.js';

const sandbox = useSandbox({ seed: 42, nftPageSize: 5 });
const source = () => ['--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--log-level', 'silent'];

describe('insight-export resolve', () => {
  it('a name: its address, as JSON and as a table', async () => {
    const alice = sandbox.data.wallets[0]!;
    const json = await runCli(['resolve', 'alice.eth', '--json', ...source()]);
    expect(json.code).toBe(0);
    const res = JSON.parse(json.stdout);
    expect(res.data.type).toBe('address');
    expect(res.data.address).toBe(alice.address);

    const table = await runCli(['resolve', 'alice.eth', ...source()]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^type:\\s+address$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^address:\\s+${alice.address}$`, 'm'));
  });

  it('a block number on a chain: the block, as JSON and as a table row', async () => {
    const chain = sandbox.data.chain(1)!;
    const number = chain.firstBlock + 17;
    const block = sandbox.data.block(1, number)!;
    const json = await runCli(['resolve', String(number), '--chain', '1', '--json', ...source()]);
    expect(json.code).toBe(0);
    const res = JSON.parse(json.stdout);
    expect(res.data.blocks).toHaveLength(1);
    expect(res.data.blocks[0]).toMatchObject({
      chain_id: 1,
      block_number: number,
      block_hash: block.block_hash,
      block_timestamp: block.block_timestamp,
    });

    const table = await runCli(['resolve', String(number), '-c', '1', ...source()]);
    const lines = table.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('chain_id') && l.includes('block_hash'));
    expect(header).toBeGreaterThan(0);
    expect(lines[header + 1]!.split(/\s+/).filter(Boolean)).toEqual([
      '1',
      String(number),
      new Date(block.block_timestamp * 1000).toISOString().replace('.000Z', 'Z'),
      block.block_hash,
      String(block.transaction_count),
      String(block.gas_used),
    ]);
  });
});

describe('insight-export decode', () => {
  it("decodes a file of a token's logs and call inputs with the service's ABI: the values the sandbox encoded", async () => {
    const token = sandbox.data.contracts.find((c) => c.chainId === 1 && c.kind === 'erc20')!;
    const logs = [...sandbox.data.logs(1)].filter((l) => l.address === token.address).slice(0, 12);
    const txs = logs.map((l) => sandbox.data.transaction(1, l.transaction_hash)!);
    const dir = await tempDir();
    const file = path.join(dir, 'body.json');
    // Whole records, as an export or an RPC node would give them: extra fields are ignored.
    await writeFile(file, JSON.stringify({ logs, transactions: txs.map((t) => ({ hash: t.hash, input: t.data })) }));

    const json = await runCli(['decode', token.address, '--file', file, '--chain', '1', '--json', ...source()]);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout);
    expect(out.logs).toHaveLength(logs.length);
    out.logs.forEach((d: { event_name: string; args: unknown[] }, i: number) => {
      const encoded = sandbox.data.logArgs(1, logs[i]!.transaction_hash)!;
      expect(d.event_name).toBe(encoded.name);
      expect(d.args.map(String)).toEqual(Object.values(encoded.args));
    });
    out.transactions.forEach((d: { function_name: string; args: unknown[] }, i: number) => {
      const encoded = sandbox.data.transactionArgs(1, txs[i]!.hash)!;
      expect(d.function_name).toBe(encoded.name);
      expect(d.args.map(String)).toEqual(Object.values(encoded.args));
    });

    // A bare array of logs works too; the table has one line per log.
    await writeFile(file, JSON.stringify(logs.map((l) => ({ topics: l.topics, data: l.data }))));
    const table = await runCli(['decode', token.address, '-f', file, ...source()]);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toBe(`logs (${logs.length}, ${logs.length} decoded)`);
    const lines = table.stdout.split('\n').slice(2, 2 + logs.length);
    lines.forEach((line, i) => {
      const encoded = sandbox.data.logArgs(1, logs[i]!.transaction_hash)!;
      expect(line).toMatch(new RegExp(`^\\s*${i}\\s+${encoded.name}\\s+${Object.values(encoded.args).join(', ')}$`));
    });
  });
});

describe('insight-export nfts', () => {
  it("lists every page of a named wallet's collections on a chain; --type filters the standards", async () => {
    const alice = sandbox.data.wallets[0]!;
    const holdings = sandbox.data.nftHoldings(alice.address, 8453);
    expect(holdings.length).toBeGreaterThan(5); // more than one explorer page
    const json = await runCli(['nfts', 'alice.eth', '--chain', '8453', '--json', ...source()]);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout);
    expect(out.address).toBe(alice.address);
    expect(out.chain_id).toBe(8453);
    expect(out.collections.map((c: any) => [c.token.address, c.token_instances.map((i: any) => [i.id, i.value])])).toEqual(
      holdings.map((h) => [h.contract.address, h.tokens.map((t) => [t.id, t.amount])]),
    );

    const only1155 = holdings.filter((h) => h.contract.kind === 'erc1155');
    const table = await runCli(['nfts', alice.address, '--chain', '8453', '--type', 'ERC-1155', ...source()]);
    expect(table.code).toBe(0);
    const tokens = only1155.reduce((n, h) => n + h.tokens.length, 0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${alice.address} on chain 8453: ${only1155.length} collections, ${tokens} tokens`);
    expect(lines).toHaveLength(2 + tokens);
    expect(lines.slice(2).every((l) => l.includes('ERC-1155'))).toBe(true);
  });
});
