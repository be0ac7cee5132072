import { writeFile } from 'node:fs/promises';
import { eventTableForSignature } from '../../src/datasets/events.js';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import type { ContractInfo } from '@insight-export/sandbox';
import type { EventRecord } from '../../src/source/records.js';
import { useSandbox } from '../helpers/sandbox.js';
import { exportJob, tempDir, type JsonRow } from './export-helpers.js';

const sandbox = useSandbox({ seed: 42 });

const SIGNATURES = {
  erc20Transfer: 'Transfer(address indexed from, address indexed to, uint256 value)',
  erc20Approval: 'Approval(address indexed owner, address indexed spender, uint256 value)',
  erc721Transfer: 'Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  erc1155TransferSingle: 'TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
};
/** The sandbox's argument names -> the export's columns. */
const COLUMN_OF: Record<string, string> = {
  from: 'arg_from',
  to: 'arg_to',
  value: 'arg_value',
  owner: 'arg_owner',
  spender: 'arg_spender',
  tokenId: 'arg_token_id',
  operator: 'arg_operator',
  id: 'arg_id',
};
const TOPIC0 = {
  Transfer: '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
  Approval: '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925',
  TransferSingle: '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62',
};

afterEach(() => {
  vi.restoreAllMocks();
});

let chain1Logs: EventRecord[] | undefined;
/**
 * Every log of the sandbox's chain 1 that a run exports: the job's range ends past the chain's head,
 * so up to the head minus the safety lag (materialised once: building records is the slow part).
 */
function logsOfChain1(): EventRecord[] {
  const end = sandbox.data.chain(1)!.headTimestamp - 900 + 1;
  return (chain1Logs ??= [...sandbox.data.logs(1)].filter((l) => l.block_timestamp < end));
}

function contractsOnChain1(): Record<'erc20' | 'erc721' | 'erc1155' | 'unknown', ContractInfo> {
  const counts = new Map<string, number>();
  for (const l of logsOfChain1()) counts.set(l.address, (counts.get(l.address) ?? 0) + 1);
  const on1 = sandbox.data.contracts.filter((c) => c.chainId === 1);
  const busiest = (kind: ContractInfo['kind']) =>
    on1.filter((c) => c.kind === kind).sort((a, b) => (counts.get(b.address) ?? 0) - (counts.get(a.address) ?? 0))[0]!;
  return { erc20: busiest('erc20'), erc721: busiest('erc721'), erc1155: busiest('erc1155'), unknown: busiest('unknown') };
}

/** Every log of the sandbox's chain 1 of a contract with a topic0. */
function truthLogs(address: string, topic0: string) {
  return logsOfChain1().filter((l) => l.address === address && l.topics[0] === topic0);
}

function jobYaml(name: string, decode: boolean, targets: string): string {
  return `name: ${name}
source: { chains: [1] }
targets:
${targets}
range: { from: "2024-02-01", to: "2024-02-08", chunk: 1d }
decode: ${decode}
`;
}

function tokenTargets(c: ReturnType<typeof contractsOnChain1>): string {
  return `  - contract: "${c.erc20.address}"
    events: ["${SIGNATURES.erc20Transfer}", "${SIGNATURES.erc20Approval}"]
  - contract: "${c.erc721.address}"
    events: ["${SIGNATURES.erc721Transfer}"]
  - contract: "${c.erc1155.address}"
    events: ["${SIGNATURES.erc1155TransferSingle}"]`;
}

/** Rows of one event table, checked one by one against what the sandbox encoded each log from. */
function expectEncodedValues(rows: JsonRow[], truth: { transaction_hash: string }[], eventName: string) {
  expect(rows.length).toBe(truth.length);
  expect(new Set(rows.map((r) => r.transaction_hash))).toEqual(new Set(truth.map((t) => t.transaction_hash)));
  for (const row of rows) {
    const encoded = sandbox.data.logArgs(1, row.transaction_hash);
    expect(encoded?.name).toBe(eventName);
    expect(row.decode_status, row.item_id).toBe('ok');
    const argColumns = Object.keys(row).filter((k) => k.startsWith('arg_'));
    expect(argColumns.sort()).toEqual(
      Object.keys(encoded!.args)
        .map((k) => COLUMN_OF[k]!)
        .sort(),
    );
    for (const [name, value] of Object.entries(encoded!.args)) expect(row[COLUMN_OF[name]!], `${row.item_id} ${name}`).toBe(value);
  }
}

describe('decoded event columns in an export', () => {
  it('ERC-20, ERC-721 and ERC-1155 events decoded by the service equal the encoded values on every row, and local decoding gives the same rows', async () => {
    const c = contractsOnChain1();
    // Count the service-decoded objects the client receives: proof that decode=true is served and used.
    let serviceDecoded = 0;
    const original = InsightClient.prototype.contractEvents;
    vi.spyOn(InsightClient.prototype, 'contractEvents').mockImplementation(async function (this: InsightClient, ...args) {
      const res = await original.apply(this, args);
      serviceDecoded += res.data.filter((r) => r.decoded).length;
      return res;
    });

    const service = await exportJob(sandbox, jobYaml('decoded-by-service', true, tokenTargets(c)));
    expect(service.report.status).toBe('succeeded');
    const tables = {
      transfer20: `${eventTableForSignature(SIGNATURES.erc20Transfer)}/`,
      transfer721: `${eventTableForSignature(SIGNATURES.erc721Transfer)}/`,
      approval: `${eventTableForSignature(SIGNATURES.erc20Approval)}/`,
      single: `${eventTableForSignature(SIGNATURES.erc1155TransferSingle)}/`,
    };
    const all = await service.rows();
    const transfers = (await service.rows(tables.transfer20)).filter((r) => r.address === c.erc20.address);
    const nftTransfers = (await service.rows(tables.transfer721)).filter((r) => r.address === c.erc721.address);
    expectEncodedValues(transfers, truthLogs(c.erc20.address, TOPIC0.Transfer), 'Transfer');
    expectEncodedValues(await service.rows(tables.approval), truthLogs(c.erc20.address, TOPIC0.Approval), 'Approval');
    expectEncodedValues(nftTransfers, truthLogs(c.erc721.address, TOPIC0.Transfer), 'Transfer');
    expectEncodedValues(await service.rows(tables.single), truthLogs(c.erc1155.address, TOPIC0.TransferSingle), 'TransferSingle');
    expect(serviceDecoded).toBe(all.length);

    serviceDecoded = 0;
    const local = await exportJob(sandbox, jobYaml('decoded-locally', false, tokenTargets(c)));
    expect(local.report.status).toBe('succeeded');
    expect(serviceDecoded).toBe(0);
    expect(local.files).toEqual(service.files);
    const byId = (rows: JsonRow[]) => [...rows].sort((a, b) => (a.item_id < b.item_id ? -1 : 1));
    expect(byId(await local.rows())).toEqual(byId(all));
  });

  it('keeps undecodable rows with their status: an ERC-721 Transfer read as ERC-20, and a signature without indexed markers and no ABI', async () => {
    const c = contractsOnChain1();
    const targets = `  - contract: "${c.erc721.address}"
    events: ["${SIGNATURES.erc20Transfer}"]
  - contract: "${c.unknown.address}"
    events: ["SandboxPing(uint256 round, bytes32 tag)"]`;
    const res = await exportJob(sandbox, jobYaml('undecodable', true, targets));
    expect(res.report.status).toBe('succeeded');

    const misread = await res.rows(`${eventTableForSignature(SIGNATURES.erc20Transfer)}/`);
    expect(misread.length).toBe(truthLogs(c.erc721.address, TOPIC0.Transfer).length);
    expect(misread.length).toBeGreaterThan(0);
    for (const row of misread) {
      expect(row.decode_status).toBe('error: log has 3 indexed topics, signature has 2');
      expect([row.arg_from, row.arg_to, row.arg_value]).toEqual([null, null, null]);
      expect(row.topic3).toMatch(/^0x[0-9a-f]{64}$/); // the raw log is all there
    }

    const pingTopic0 = logsOfChain1().find((l) => l.address === c.unknown.address)!.topics[0]!;
    const pings = await res.rows('events_sandbox_ping_');
    expect(pings.length).toBe(truthLogs(c.unknown.address, pingTopic0).length);
    expect(pings.length).toBeGreaterThan(0);
    for (const row of pings) {
      expect(row.decode_status).toBe('no_abi');
      expect([row.arg_round, row.arg_tag]).toEqual([null, null]);
      expect(row.data).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });

  it('an ABI file supplies the indexed markers a bare signature lacks: local decoding equals the encoded values', async () => {
    const c = contractsOnChain1();
    const dir = await tempDir();
    await writeFile(
      path.join(dir, 'erc20.json'),
      JSON.stringify([
        {
          type: 'event',
          name: 'Transfer',
          anonymous: false,
          inputs: [
            { name: 'from', type: 'address', indexed: true },
            { name: 'to', type: 'address', indexed: true },
            { name: 'value', type: 'uint256', indexed: false },
          ],
        },
      ]),
    );
    const targets = `  - contract: "${c.erc20.address}"
    events: ["Transfer(address from, address to, uint256 value)"]
    abi: ./erc20.json`;
    const res = await exportJob(sandbox, jobYaml('abi-file', false, targets), { dir });
    expect(res.report.status).toBe('succeeded');
    expectEncodedValues(
      await res.rows(`${eventTableForSignature(SIGNATURES.erc20Transfer)}/`),
      truthLogs(c.erc20.address, TOPIC0.Transfer),
      'Transfer',
    );
  });
});
