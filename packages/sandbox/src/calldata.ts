/** A chain row's calldata: the call its kind encodes, with the row's arguments. */
import {
  TxKind,
  type RichArgs,
  encodeApprove,
  encodePoke,
  encodeSafeTransferFrom1155,
  encodeSafeTransferFrom721,
  encodeSettle,
  encodeTransfer,
  encodeTransferFrom,
} from './abi.js';
import { F } from './field-salts.js';
import { wordHex } from './prng.js';

/** What a row's calldata is made of: the columns and derived values of its chain (ChainState). */
export interface CalldataColumns {
  readonly kind: Uint8Array;
  readonly arg: Uint32Array;
  readonly tokenId: Uint32Array;
  address(actor: number): string;
  fromAddress(row: number): string;
  tokenAmount(row: number): bigint;
  bytes1155(row: number): string;
  pokeTag(row: number): string;
  richArgs(row: number): RichArgs;
  r32(row: number, field: number): number;
}

export function calldataAt(c: CalldataColumns, row: number): string {
  const k = c.kind[row]!;
  const from = c.fromAddress(row);
  switch (k) {
    case TxKind.erc20Transfer:
      return encodeTransfer(c.address(c.arg[row]!), c.tokenAmount(row));
    case TxKind.erc20Approve:
      return encodeApprove(c.address(c.arg[row]!), c.tokenAmount(row));
    case TxKind.erc721TransferFrom:
      return encodeTransferFrom(from, c.address(c.arg[row]!), BigInt(c.tokenId[row]!));
    case TxKind.erc721SafeTransferFrom:
      return encodeSafeTransferFrom721(from, c.address(c.arg[row]!), BigInt(c.tokenId[row]!));
    case TxKind.erc1155SafeTransferFrom:
      return encodeSafeTransferFrom1155(from, c.address(c.arg[row]!), BigInt(c.tokenId[row]!), c.tokenAmount(row), c.bytes1155(row));
    case TxKind.unknownPoke:
      return encodePoke(BigInt(row), c.pokeTag(row));
    case TxKind.richSettle:
      return encodeSettle(c.richArgs(row));
    case TxKind.deploy:
    case TxKind.createOther:
      // Init code stub: a recognisable constructor prefix plus a per-contract word.
      return '0x6080604052348015600f57600080fd5b50' + wordHex(c.r32(row, F.otherContract)) + '00';
    default:
      return '0x';
  }
}
