/**
 * Signature parsing, canonical forms and selectors are computed without viem (a run that decodes
 * nothing must not load it). They must still be exactly what viem computes, for every shape of
 * parameter: tuples, arrays of tuples, nested tuples, fixed and dynamic arrays.
 */
import { parseAbiItem, toEventSelector, toFunctionSelector, type AbiEvent, type AbiFunction } from 'viem';
import { formatAbiItem } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { canonicalSignature, eventSelector, functionSelector } from '../../src/abi/abi-types.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';

const EVENTS = [
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed, address indexed, uint256)',
  'event Batch(uint256[] ids, uint256[3] amounts, bytes data, string note)',
  'event Order((address maker, uint256 amount) order, (address, bytes32)[] fills, ((uint8 a, int256 b)[2] inner, bool ok) nested)',
  'event Swap(address indexed sender, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)',
  'event Empty()',
];

const FUNCTIONS = [
  'function transfer(address to, uint256 amount)',
  'function multicall(bytes[] data)',
  'function fill((address maker, (uint256 a, bytes b)[] legs) order, bytes32[2] proofs, bool flag)',
  'function noop()',
];

describe('canonical signatures and selectors', () => {
  it.each(EVENTS)('event %s: canonical form and topic0 equal viem’s', (text) => {
    const item = parseAbiItem(text) as AbiEvent;
    expect(canonicalSignature(item)).toBe(formatAbiItem(item));
    expect(eventSelector(canonicalSignature(item))).toBe(toEventSelector(formatAbiItem(item)));
    const parsed = parseEventSignature(text);
    expect(parsed.canonical).toBe(formatAbiItem(item));
    expect(parsed.topic0).toBe(toEventSelector(item));
  });

  it.each(FUNCTIONS)('function %s: canonical form and selector equal viem’s', (text) => {
    const item = parseAbiItem(text) as AbiFunction;
    expect(canonicalSignature(item)).toBe(formatAbiItem(item));
    expect(functionSelector(canonicalSignature(item))).toBe(toFunctionSelector(item));
  });
});
