/** A block's or a receipt's logs bloom: the three bits each address and topic sets. */
import { keccak256, type Hex } from 'viem';

/** Bloom bit positions per input (addresses and topics repeat a lot, keccak is the cost). */
export const bloomBitsCache = new Map<string, [number, number, number]>();

export function addToBloom(bloom: Uint8Array, hex: string): void {
  let bits = bloomBitsCache.get(hex);
  if (!bits) {
    const h = keccak256(hex as Hex, 'bytes');
    bits = [((h[0]! << 8) | h[1]!) & 2047, ((h[2]! << 8) | h[3]!) & 2047, ((h[4]! << 8) | h[5]!) & 2047];
    if (bloomBitsCache.size >= 500_000) bloomBitsCache.clear();
    bloomBitsCache.set(hex, bits);
  }
  for (const bit of bits) bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
}
