import type { AbiParameter } from 'viem';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';

/** What an ABI type string means for decoding and normalising. */
export type TypeInfo =
  | { kind: 'address' }
  | { kind: 'bool' }
  | { kind: 'string' }
  | { kind: 'bytes' }
  | { kind: 'fixedBytes'; size: number }
  | { kind: 'int'; bits: number; signed: boolean }
  | { kind: 'array'; element: AbiParameter; length: number | null }
  | { kind: 'tuple'; components: readonly AbiParameter[] }
  | { kind: 'unsupported'; type: string };

const ARRAY_RE = /^(.*)\[(\d*)\]$/;
const INT_RE = /^(u?)int(\d+)$/;
const BYTES_RE = /^bytes(\d+)$/;

export function typeInfo(param: AbiParameter): TypeInfo {
  const type = param.type;
  const array = ARRAY_RE.exec(type);
  if (array) {
    const element = { ...param, type: array[1] ?? '' } as AbiParameter;
    delete (element as { name?: string }).name;
    delete (element as { indexed?: boolean }).indexed;
    return { kind: 'array', element, length: array[2] ? Number(array[2]) : null };
  }
  if (type === 'address') return { kind: 'address' };
  if (type === 'bool') return { kind: 'bool' };
  if (type === 'string') return { kind: 'string' };
  if (type === 'bytes') return { kind: 'bytes' };
  if (type === 'tuple') {
    const components = (param as { components?: readonly AbiParameter[] }).components ?? [];
    return { kind: 'tuple', components };
  }
  const int = INT_RE.exec(type);
  if (int) {
    const bits = Number(int[2]);
    if (bits >= 8 && bits <= 256 && bits % 8 === 0) return { kind: 'int', bits, signed: int[1] !== 'u' };
  }
  const bytes = BYTES_RE.exec(type);
  if (bytes) {
    const size = Number(bytes[1]);
    if (size >= 1 && size <= 32) return { kind: 'fixedBytes', size };
  }
  return { kind: 'unsupported', type };
}

/** True for canonical Solidity ABI types this tool can decode (recursing into arrays and tuples). */
export function isSupportedType(param: AbiParameter): boolean {
  const info = typeInfo(param);
  if (info.kind === 'unsupported') return false;
  if (info.kind === 'array') return isSupportedType(info.element);
  if (info.kind === 'tuple') return info.components.length > 0 && info.components.every(isSupportedType);
  return true;
}

/** Dynamic types are stored in topics as keccak256 hashes when indexed (viem's decodeTopic rule). */
export function isHashedWhenIndexed(param: AbiParameter): boolean {
  const info = typeInfo(param);
  return info.kind === 'string' || info.kind === 'bytes' || info.kind === 'tuple' || info.kind === 'array';
}

export function isIndexed(param: AbiParameter): boolean {
  return (param as { indexed?: boolean }).indexed === true;
}

/** Canonical type string of one parameter: `uint256`, `(address,bytes)[]`. */
export function canonicalType(param: AbiParameter): string {
  if (!param.type.startsWith('tuple')) return param.type;
  const components = (param as { components?: readonly AbiParameter[] }).components ?? [];
  return `(${components.map(canonicalType).join(',')})${param.type.slice('tuple'.length)}`;
}

/** Types only, what selectors hash: `Transfer(address,address,uint256)`. */
export function canonicalSignature(item: { name: string; inputs: readonly AbiParameter[] }): string {
  return `${item.name}(${item.inputs.map(canonicalType).join(',')})`;
}

/** keccak256 of a text's UTF-8 bytes (selectors hash signatures, EIP-55 hashes the lowercase hex of an address). */
export function keccakOfText(text: string): Uint8Array {
  return keccak_256(new TextEncoder().encode(text));
}

/** An event's topic0: keccak256 of its canonical signature. */
export function eventSelector(canonical: string): `0x${string}` {
  return `0x${bytesToHex(keccakOfText(canonical))}`;
}

/** A function's selector: the first 4 bytes of keccak256 of its canonical signature. */
export function functionSelector(canonical: string): `0x${string}` {
  return eventSelector(canonical).slice(0, 10) as `0x${string}`;
}
