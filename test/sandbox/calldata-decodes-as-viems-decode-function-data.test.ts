/**
 * The sandbox decodes calldata (decoded.inputs of wallet transactions, the decode route) as
 * viem's decodeFunctionData does, without its address checksums (the wire lowercases addresses):
 * the same function, values and failures, on every generated call of every contract kind, in
 * every bytes style, and on calldata that is cut short, padded, unknown or written in upper case.
 */
import { decodeFunctionData, toFunctionSelector, type Abi, type AbiFunction, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { canonicalType } from '../../src/abi/abi-types.js';
import { ABI_BY_KIND, RICH_ABI, decodeCallWithAbi, wireValue, type BytesStyle, type ContractKind } from '@insight-export/sandbox';
import { buildSandboxData } from '@insight-export/sandbox';

const data = buildSandboxData({ seed: 5, transactions: 4_000, richContract: true });
const STYLES: BytesStyle[] = ['hex', 'base64', 'array'];

/** decodeCallWithAbi as it was, on viem's decodeFunctionData. */
function reference(abi: Abi, input: string, style: BytesStyle) {
  if (input.length < 10) return null;
  try {
    const { functionName, args } = decodeFunctionData({ abi, data: input as Hex });
    const selector = input.slice(0, 10).toLowerCase();
    const item = abi.find((i): i is AbiFunction => i.type === 'function' && i.name === functionName && toFunctionSelector(i) === selector);
    if (!item) return null;
    const inputs: Record<string, unknown> = {};
    const wireArgs: unknown[] = [];
    item.inputs.forEach((p, i) => {
      const v = wireValue(p, (args ?? [])[i], style);
      wireArgs.push(v);
      inputs[p.name || `arg${i}`] = v;
    });
    return { name: item.name, signature: `${item.name}(${item.inputs.map((p) => canonicalType(p)).join(',')})`, inputs, args: wireArgs };
  } catch {
    return null;
  }
}

function abiOf(kind: ContractKind): Abi | null {
  return kind === 'rich' ? RICH_ABI : ABI_BY_KIND[kind];
}

describe('sandbox calldata decoding', () => {
  it('equals viem’s decodeFunctionData on every generated call, in every bytes style', () => {
    const kinds = new Set<string>();
    let calls = 0;
    for (const chain of data.chains) {
      for (const tx of data.transactions(chain.chainId)) {
        const contract = tx.to_address ? data.contract(tx.to_address) : undefined;
        const abi = contract ? abiOf(contract.kind) : null;
        if (!abi) continue;
        for (const style of STYLES) expect(decodeCallWithAbi(abi, tx.data, style)).toEqual(reference(abi, tx.data, style));
        if (decodeCallWithAbi(abi, tx.data, 'hex')) kinds.add(contract!.kind);
        calls++;
      }
    }
    expect(calls).toBeGreaterThan(500);
    expect([...kinds].sort()).toEqual(['erc1155', 'erc20', 'erc721', 'rich']);
  });

  it('fails and succeeds where viem does on calldata that is cut, padded, unknown or in upper case', () => {
    const samples = data.chains.flatMap((chain) =>
      [...data.transactions(chain.chainId)]
        .filter((tx) => tx.to_address && abiOf(data.contract(tx.to_address)?.kind ?? 'unknown'))
        .slice(0, 40),
    );
    expect(samples.length).toBeGreaterThan(40);
    for (const tx of samples) {
      const abi = abiOf(data.contract(tx.to_address!)!.kind)!;
      const variants = [
        tx.data.slice(0, 10),
        tx.data.slice(0, tx.data.length - 2),
        tx.data.slice(0, 10 + 64),
        `${tx.data}00`,
        `${tx.data}${'0'.repeat(64)}`,
        `0xdeadbeef${tx.data.slice(10)}`,
        `0x${tx.data.slice(2).toUpperCase()}`,
        `0x${tx.data.slice(2, 10)}${tx.data.slice(10).toUpperCase()}`,
        tx.data.slice(0, 9),
      ];
      for (const input of variants) expect(decodeCallWithAbi(abi, input, 'hex'), input.slice(0, 80)).toEqual(reference(abi, input, 'hex'));
    }
  });
});
