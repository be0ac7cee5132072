import { decodeEventLog, encodeAbiParameters, encodeFunctionData, keccak256, toBytes, type Abi, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  ERC1155_ABI,
  ERC20_ABI,
  ERC721_ABI,
  SELECTOR,
  TOPIC0,
  UNKNOWN_ABI,
  RICH_ABI,
  buildSandboxData,
  type ContractKind,
} from '@insight-export/sandbox';

const data = buildSandboxData({ seed: 3, transactions: 4_000 });
const ABIS: Record<ContractKind, Abi> = {
  erc20: ERC20_ABI,
  erc721: ERC721_ABI,
  erc1155: ERC1155_ABI,
  unknown: UNKNOWN_ABI,
  rich: RICH_ABI,
};

/** Ground-truth args as viem wants them: uint -> bigint, the rest as given. */
function toViemArgs(abi: Abi, name: string, args: Record<string, string>): unknown[] {
  const item = abi.find((i) => i.type === 'function' && i.name === name && i.inputs.length === Object.keys(args).length);
  if (!item || item.type !== 'function') throw new Error(`no ${name} with ${Object.keys(args).length} inputs`);
  return item.inputs.map((p) => (p.type.startsWith('uint') ? BigInt(args[p.name!]!) : args[p.name!]));
}

function normalise(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return v.toLowerCase();
  return v;
}

describe('sandbox ABI encoding', () => {
  it('uses keccak256 of the canonical signatures for topic0 and selectors', () => {
    expect(TOPIC0.Transfer).toBe(keccak256(toBytes('Transfer(address,address,uint256)')));
    expect(TOPIC0.TransferSingle).toBe(keccak256(toBytes('TransferSingle(address,address,address,uint256,uint256)')));
    expect(SELECTOR.transfer).toBe(keccak256(toBytes('transfer(address,uint256)')).slice(0, 10));
    expect(SELECTOR.safeTransferFrom1155).toBe(keccak256(toBytes('safeTransferFrom(address,address,uint256,uint256,bytes)')).slice(0, 10));
  });

  it('encodes every generated call exactly as viem encodeFunctionData does', () => {
    const seen = new Set<string>();
    for (const chain of data.chains) {
      for (const tx of data.transactions(chain.chainId)) {
        const args = data.transactionArgs(chain.chainId, tx.hash);
        if (!args) {
          expect(tx.function_selector).toBeNull();
          continue;
        }
        const contract = data.contract(tx.to_address!)!;
        const abi = ABIS[contract.kind];
        const expected = encodeFunctionData({ abi, functionName: args.name, args: toViemArgs(abi, args.name, args.args) } as never);
        expect(tx.data).toBe(expected);
        expect(tx.function_selector).toBe(expected.slice(0, 10));
        seen.add(`${contract.kind}:${args.signature}`);
      }
    }
    // every call shape of the brief appeared
    expect([...seen].sort()).toEqual(
      [
        'erc1155:safeTransferFrom(address,address,uint256,uint256,bytes)',
        'erc20:approve(address,uint256)',
        'erc20:transfer(address,uint256)',
        'erc721:safeTransferFrom(address,address,uint256)',
        'erc721:transferFrom(address,address,uint256)',
        'unknown:poke(uint256,bytes32)',
      ].sort(),
    );
  });

  it('encodes every log so that viem decodeEventLog returns the generating arguments', () => {
    let count = 0;
    for (const chain of data.chains) {
      for (const log of data.logs(chain.chainId)) {
        const args = data.logArgs(chain.chainId, log.transaction_hash)!;
        const contract = data.contract(log.address)!;
        const decoded = decodeEventLog({
          abi: ABIS[contract.kind],
          topics: log.topics as [Hex, ...Hex[]],
          data: log.data as Hex,
          strict: true,
        });
        expect(decoded.eventName).toBe(args.name);
        const got = Object.fromEntries(
          Object.entries(decoded.args as unknown as Record<string, unknown>).map(([k, v]) => [k, normalise(v)]),
        );
        expect(got).toEqual(args.args);
        count++;
      }
    }
    expect(count).toBeGreaterThan(1000);
  });

  it('pads indexed parameters to 32-byte topics', () => {
    const nft = [...data.logs(1)].find((l) => data.contract(l.address)!.kind === 'erc721' && l.topics.length === 4)!;
    const args = data.logArgs(1, nft.transaction_hash)!;
    expect(nft.topics[2]).toBe(encodeAbiParameters([{ type: 'address' }], [args.args.to as Hex]));
    expect(nft.topics[3]).toBe(encodeAbiParameters([{ type: 'uint256' }], [BigInt(args.args.tokenId!)]));
  });
});
