import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { AbiFileError, loadAbiFile } from '../../src/decode/abi-file.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ERC20_ABI = [
  {
    type: 'event',
    name: 'Transfer',
    anonymous: false,
    inputs: [
      { name: 'from', type: 'address', indexed: true, internalType: 'address' },
      { name: 'to', type: 'address', indexed: true, internalType: 'address' },
      { name: 'value', type: 'uint256', indexed: false, internalType: 'uint256' },
    ],
  },
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
];

const tmp = useTempDir('decode-abi-');

async function file(name: string, content: unknown): Promise<string> {
  const path = join(tmp.dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

async function loadError(path: string): Promise<AbiFileError> {
  const err = await loadAbiFile(path).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AbiFileError);
  expect((err as AbiFileError).exitCode).toBe(ExitCode.badInput);
  expect((err as AbiFileError).details).toContain(path);
  return err as AbiFileError;
}

describe('loadAbiFile', () => {
  it('reads a plain ABI array', async () => {
    const abi = await loadAbiFile(await file('plain.json', ERC20_ABI));
    expect(abi.map((i) => i.type)).toEqual(['event', 'function']);
    expect(abi[0]).toMatchObject({ name: 'Transfer', inputs: ERC20_ABI[0]!.inputs });
  });

  it('reads Hardhat, Foundry and Truffle artifacts, solc metadata and an `abi` given as a JSON string', async () => {
    const shapes = {
      'hardhat.json': { _format: 'hh-sol-artifact-1', contractName: 'Token', abi: ERC20_ABI, bytecode: '0x60' },
      'foundry.json': { abi: ERC20_ABI, bytecode: { object: '0x60' }, methodIdentifiers: {} },
      'truffle.json': { contractName: 'Token', abi: ERC20_ABI, networks: {} },
      'metadata.json': { compiler: { version: '0.8.24' }, output: { abi: ERC20_ABI } },
      'string.json': { abi: JSON.stringify(ERC20_ABI) },
    };
    for (const [name, content] of Object.entries(shapes)) {
      const abi = await loadAbiFile(await file(name, content));
      expect(abi, name).toHaveLength(2);
      expect(abi[1], name).toMatchObject({ type: 'function', name: 'transfer' });
    }
  });

  it('reads an array of human-readable signatures', async () => {
    const abi = await loadAbiFile(
      await file('human.json', [
        'event Transfer(address indexed from, address indexed to, uint256 value)',
        'function transfer(address to, uint256 amount) returns (bool)',
      ]),
    );
    expect(abi[0]).toMatchObject({ type: 'event', name: 'Transfer' });
    expect(abi[1]).toMatchObject({ type: 'function', name: 'transfer' });
  });

  it('fills defaults the ABI spec allows to omit (type "function", inputs)', async () => {
    const abi = await loadAbiFile(await file('old.json', [{ name: 'f', inputs: [{ name: 'x', type: 'uint8' }] }]));
    expect(abi[0]).toMatchObject({ type: 'function', name: 'f', outputs: [] });
  });

  it('names a missing file', async () => {
    const err = await loadError(join(tmp.dir, 'nope.json'));
    expect(err.shortMessage).toContain('does not exist');
  });

  it('names the line and column of a JSON syntax error', async () => {
    const err = await loadError(await file('broken.json', '[\n  {"type": "event",\n   "name": "X" "inputs": []}\n]'));
    expect(err.shortMessage).toMatch(/not valid JSON \(line 3, column \d+/);
  });

  it('says what is wrong with the shape or an entry', async () => {
    expect((await loadError(await file('obj.json', { contractName: 'X', bytecode: '0x' }))).shortMessage).toContain(
      'without an "abi" field (keys: contractName, bytecode)',
    );
    expect((await loadError(await file('num.json', 42))).shortMessage).toContain('JSON number');
    expect((await loadError(await file('entry.json', [ERC20_ABI[0], 'x']))).shortMessage).toContain('abi[1] is not an object');
    expect((await loadError(await file('kind.json', [{ type: 'evnt', name: 'X', inputs: [] }]))).shortMessage).toContain(
      'abi[0] has unknown type "evnt"',
    );
    const noType = await loadError(await file('notype.json', [{ type: 'event', name: 'X', inputs: [{ name: 'a' }] }]));
    expect(noType.shortMessage).toContain('abi[0] (event X), parameter 0: no "type"');
    const alias = await loadError(await file('alias.json', [{ type: 'event', name: 'X', inputs: [{ name: 'a', type: 'uint' }] }]));
    expect(alias.shortMessage).toContain('parameter 0 (a): type "uint" is not a canonical ABI type');
    expect(alias.hint).toContain('uint256');
    const human = await loadError(await file('badhuman.json', ['event X(uint256 a', 'function y()']));
    expect(human.shortMessage).toContain('does not parse');
  });
});
