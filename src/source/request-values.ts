/**
 * Checking one value of a request before it is sent: addresses (with their EIP-55 checksum), hex
 * values, integers in a range; a bad one is a RequestValidationError naming the parameter and
 * showing the value (shortened).
 */
import { keccakOfText } from '../abi/abi-types.js';
import type { Hex } from './records.js';
import { RequestValidationError } from './errors.js';

export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
export const HASH32_RE = /^0x[0-9a-fA-F]{64}$/;
export const SELECTOR_RE = /^0x[0-9a-fA-F]{8}$/;
export const HEX_RE = /^0x(?:[0-9a-fA-F]{2})*$/;

export function isAddress(value: string): boolean {
  return ADDRESS_RE.test(value);
}

/**
 * For an address written in mixed case (an EIP-55 checksum) whose case does not match: the
 * checksummed form of what is written. Null when the case matches or is all lower or upper.
 */
export function checksumMismatch(address: string): string | null {
  const digits = address.slice(2);
  if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return null;
  const expected = toChecksumAddress(address);
  return expected === address ? null : expected;
}

/** EIP-55: a hex digit is upper case where the same nibble of keccak256(lowercase hex text) is >= 8. */
function toChecksumAddress(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const hash = keccakOfText(lower);
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += nibble >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  }
  return out;
}

/** A contract or wallet address: 0x + 40 hex (a mixed-case one must match its checksum); returned lowercase. */
export function validateAddress(parameter: string, value: unknown): Hex {
  if (typeof value !== 'string' || !ADDRESS_RE.test(value)) {
    throw new RequestValidationError(parameter, `expected an address (0x + 40 hex digits), got ${show(value)}`);
  }
  const checksummed = checksumMismatch(value);
  if (checksummed) {
    throw new RequestValidationError(parameter, `the EIP-55 checksum of ${value} does not match (its mixed case)`, {
      hint: `Check every digit; ${checksummed} is the checksummed form of what is written. Lowercase skips the check.`,
    });
  }
  return value.toLowerCase() as Hex;
}

export function validateHex(parameter: string, value: unknown, re: RegExp, what: string): string {
  if (typeof value !== 'string' || !re.test(value)) {
    throw new RequestValidationError(parameter, `expected ${what}, got ${show(value)}`);
  }
  return value.toLowerCase();
}

export function show(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export function integerInRange(parameter: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RequestValidationError(parameter, `expected an integer from ${min} to ${max}, got ${show(value)}`);
  }
  return value;
}
