/**
 * Counter-based pseudo-randomness for the sandbox data set. Every derived field is a pure
 * function of (seed, chain, row, field), so rows can be rebuilt on demand instead of stored.
 */

/** murmur3 fmix32: a bijection on 32-bit integers (see unmix32). */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Inverse of mix32: lets a hash whose first word is mix32(index ^ key) be mapped back to its row. */
export function unmix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7ed1b41d);
  x ^= (x >>> 13) ^ (x >>> 26);
  x = Math.imul(x, 0xa5cb9243);
  x ^= x >>> 16;
  return x >>> 0;
}

/** A well-mixed 32-bit value from up to three integers. */
export function hash3(a: number, b: number, c = 0): number {
  return mix32(a ^ mix32((b ^ mix32(c + 0x9e3779b9)) + 0x7f4a7c15));
}

/** Uniform float in [0, 1) from a 32-bit value. */
export function unit(u32: number): number {
  return u32 / 4294967296;
}

/** Sequential PRNG (sfc32) for the build pass. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number, stream = 0) {
    this.a = hash3(seed, stream, 1);
    this.b = hash3(seed, stream, 2);
    this.c = hash3(seed, stream, 3);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.next();
  }
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }
  /** Uniform float in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }
  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }
}

const HEX8: string[] = [];
for (let i = 0; i < 256; i++) HEX8.push(i.toString(16).padStart(2, '0'));

export function wordHex(w: number): string {
  w >>>= 0;
  return HEX8[w >>> 24]! + HEX8[(w >>> 16) & 255]! + HEX8[(w >>> 8) & 255]! + HEX8[w & 255]!;
}

/** `words` 32-bit words as 0x-hex: word 0 is `first`, the rest derived from (key, salt). */
export function derivedHex(first: number, key: number, salt: number, words: number): string {
  let s = '0x' + wordHex(first);
  for (let k = 1; k < words; k++) s += wordHex(hash3(key ^ first, salt, k));
  return s;
}

/** Lowercase 0x hex of a non-negative bigint left-padded to 32 bytes. */
export function uint256Hex(v: bigint): string {
  return v.toString(16).padStart(64, '0');
}
