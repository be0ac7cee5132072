import { badRequest } from './errors.js';

/** What the read interface accepts as path and query inputs, checked the same way by every data source. */
export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
export const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
export const SELECTOR_RE = /^0x[0-9a-fA-F]{8}$/;

export function toParams(p: URLSearchParams | string): URLSearchParams {
  return typeof p === 'string' ? new URLSearchParams(p) : p;
}

/** Lowercase address of a contract path parameter; 400 when it is not a 0x address. */
export function contractAddress(contract: string): string {
  if (!ADDRESS_RE.test(contract)) throw badRequest(`invalid contract address: ${contract}`);
  return contract.toLowerCase();
}
