/** The arguments a chain row's calldata and log were encoded from (the decoders' expected answers). */
import { CANONICAL, TxKind } from './abi.js';
import type { ChainState } from './chain-state.js';
import type { EncodedArgs } from './dataset-shapes.js';

/** The arguments a transaction's calldata was encoded from; null for plain transfers and creations. */
export function txArgsAt(c: ChainState, row: number): EncodedArgs | null {
  const from = c.fromAddress(row);
  const recipient = () => c.address(c.arg[row]!);
  switch (c.kind[row]!) {
    case TxKind.erc20Transfer:
      return { name: 'transfer', signature: CANONICAL.transfer, args: { to: recipient(), value: c.tokenAmount(row).toString() } };
    case TxKind.erc20Approve:
      return { name: 'approve', signature: CANONICAL.approve, args: { spender: recipient(), value: c.tokenAmount(row).toString() } };
    case TxKind.erc721TransferFrom:
      return {
        name: 'transferFrom',
        signature: CANONICAL.transferFrom,
        args: { from, to: recipient(), tokenId: String(c.tokenId[row]) },
      };
    case TxKind.erc721SafeTransferFrom:
      return {
        name: 'safeTransferFrom',
        signature: CANONICAL.safeTransferFrom721,
        args: { from, to: recipient(), tokenId: String(c.tokenId[row]) },
      };
    case TxKind.erc1155SafeTransferFrom:
      return {
        name: 'safeTransferFrom',
        signature: CANONICAL.safeTransferFrom1155,
        args: { from, to: recipient(), id: String(c.tokenId[row]), value: c.tokenAmount(row).toString(), data: c.bytes1155(row) },
      };
    case TxKind.unknownPoke:
      return { name: 'poke', signature: 'poke(uint256,bytes32)', args: { round: String(row), tag: c.pokeTag(row) } };
    default:
      return null;
  }
}

/** The arguments a log was encoded from; null when the row has no log. */
export function logArgsAt(c: ChainState, row: number): EncodedArgs | null {
  if (!c.hasLog(row)) return null;
  const from = c.fromAddress(row);
  const recipient = c.address(c.arg[row]!);
  switch (c.kind[row]!) {
    case TxKind.erc20Transfer:
      return { name: 'Transfer', signature: CANONICAL.Transfer, args: { from, to: recipient, value: c.tokenAmount(row).toString() } };
    case TxKind.erc20Approve:
      return {
        name: 'Approval',
        signature: CANONICAL.Approval,
        args: { owner: from, spender: recipient, value: c.tokenAmount(row).toString() },
      };
    case TxKind.erc721TransferFrom:
    case TxKind.erc721SafeTransferFrom:
      return { name: 'Transfer', signature: CANONICAL.Transfer, args: { from, to: recipient, tokenId: String(c.tokenId[row]) } };
    case TxKind.erc1155SafeTransferFrom:
      return {
        name: 'TransferSingle',
        signature: CANONICAL.TransferSingle,
        args: { operator: from, from, to: recipient, id: String(c.tokenId[row]), value: c.tokenAmount(row).toString() },
      };
    case TxKind.unknownPoke:
      return { name: 'SandboxPing', signature: CANONICAL.SandboxPing, args: { round: String(row), tag: c.pokeTag(row) } };
    default:
      return null;
  }
}
