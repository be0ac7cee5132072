import { decodeAbiParameters, encodeAbiParameters, type AbiParameter, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { compileParametersDecoder } from '../../src/decode/calldata.js';

/** viem's values with every checksummed address lowercased: what the columns hold. */
function lowercased(value: unknown): unknown {
  if (typeof value === 'string' && /^0x[0-9a-fA-F]{40}$/.test(value)) return value.toLowerCase();
  if (Array.isArray(value)) return value.map(lowercased);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lowercased(v)]));
  return value;
}

const A = '0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B';
const B = '0x00000000000000000000000000000000000000ff';
const named: AbiParameter[] = [
  { name: 'to', type: 'address' },
  { name: 'amount', type: 'uint256' },
  { name: 'path', type: 'address[]' },
  { name: 'grid', type: 'address[2][]' },
  {
    name: 'order',
    type: 'tuple',
    components: [
      { name: 'maker', type: 'address' },
      { name: 'data', type: 'bytes' },
    ],
  },
  { name: 'legs', type: 'tuple[]', components: [{ type: 'address' }, { type: 'int24' }] },
];
const values = [A, 2n ** 200n + 7n, [A, B], [[B, A]], { maker: B, data: '0xdeadbeef' }, [[A, -5]]];

describe('calldata decoding without address checksums', () => {
  it('gives viem its values with addresses in lowercase, nested in arrays and tuples too', () => {
    const data = encodeAbiParameters(named, values);
    const got = compileParametersDecoder(named)(data);
    expect(got).toEqual(lowercased(decodeAbiParameters(named, data)));
    expect(got[0]).toBe(A.toLowerCase());
    expect((got[4] as { maker: string }).maker).toBe(B.toLowerCase());
  });

  it('reads the low 20 bytes of a word with dirty padding, as viem does', () => {
    const params: AbiParameter[] = [{ name: 'to', type: 'address' }];
    const data = `0x${'ff'.repeat(12)}${A.slice(2)}` as Hex;
    expect(compileParametersDecoder(params)(data)).toEqual(lowercased(decodeAbiParameters(params, data)));
  });

  it('throws where viem throws (data cut short)', () => {
    const data = encodeAbiParameters(named, values);
    const short = data.slice(0, data.length - 64) as Hex;
    expect(() => decodeAbiParameters(named, short)).toThrow();
    expect(() => compileParametersDecoder(named)(short)).toThrow();
  });
});
