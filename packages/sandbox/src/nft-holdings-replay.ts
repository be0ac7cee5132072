/** Who holds which NFTs on a chain, replayed from its successful ERC-721 and ERC-1155 transfers. */
import { TxKind } from './abi.js';
import type { ChainState } from './chain-state.js';

/** actor -> contract actor -> token id -> amount, replayed from the chain's successful NFT transfers. */
export function replayHoldings(c: ChainState): Map<number, Map<number, Map<number, bigint>>> {
  const owner721 = new Map<number, Map<number, number>>();
  const bal1155 = new Map<string, bigint>();
  for (let i = 0; i < c.n; i++) {
    if (c.status[i] !== 1) continue;
    const k = c.kind[i]!;
    if (k === TxKind.erc721TransferFrom || k === TxKind.erc721SafeTransferFrom) {
      let m = owner721.get(c.to[i]!);
      if (!m) owner721.set(c.to[i]!, (m = new Map<number, number>()));
      m.set(c.tokenId[i]!, c.arg[i]!);
    } else if (k === TxKind.erc1155SafeTransferFrom) {
      const amount = c.tokenAmount(i);
      const fromKey = `${c.to[i]}:${c.tokenId[i]}:${c.from[i]}`;
      const toKey = `${c.to[i]}:${c.tokenId[i]}:${c.arg[i]}`;
      if (!c.isGenesis(i)) {
        const fb = bal1155.get(fromKey) ?? 0n;
        bal1155.set(fromKey, fb > amount ? fb - amount : 0n);
      }
      bal1155.set(toKey, (bal1155.get(toKey) ?? 0n) + amount);
    }
  }
  const out = new Map<number, Map<number, Map<number, bigint>>>();
  const add = (holder: number, contract: number, id: number, amount: bigint) => {
    let h = out.get(holder);
    if (!h) out.set(holder, (h = new Map<number, Map<number, bigint>>()));
    let t = h.get(contract);
    if (!t) h.set(contract, (t = new Map<number, bigint>()));
    t.set(id, amount);
  };
  for (const [contract, m] of owner721) for (const [id, holder] of m) add(holder, contract, id, 1n);
  for (const [key, amount] of bal1155) {
    if (amount <= 0n) continue;
    const [contract, id, holder] = key.split(':').map(Number) as [number, number, number];
    add(holder, contract, id, amount);
  }
  return out;
}
