import type { AbiParameter } from 'viem';
import { describe, expect, it } from 'vitest';
import { DecodeValueError, normaliseValue } from '../../src/decode/decoded-values.js';

const p = (type: string, extra: Partial<AbiParameter> = {}) => ({ type, ...extra }) as AbiParameter;
const MAX = (2n ** 256n - 1n).toString();

function rejects(value: unknown, param: AbiParameter, reason: string) {
  let caught: unknown;
  try {
    normaliseValue(value, param);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(DecodeValueError);
  expect((caught as DecodeValueError).reason).toBe(reason);
}

describe('normaliseValue', () => {
  it('integers: JSON numbers, decimal strings, hex quantities and bigints give one decimal string', () => {
    for (const v of [255, '255', '0255', '+255', '0xff', '0xFF', 255n]) expect(normaliseValue(v, p('uint8'))).toBe('255');
    for (const v of [0, '0', '-0', '0x0', 0n, '000']) expect(normaliseValue(v, p('int32'))).toBe('0');
    expect(normaliseValue(MAX, p('uint256'))).toBe(MAX);
    expect(normaliseValue(`0x${'f'.repeat(64)}`, p('uint256'))).toBe(MAX);
    expect(normaliseValue(-128, p('int8'))).toBe('-128');
    expect(normaliseValue('-0x80', p('int8'))).toBe('-128');
    expect(normaliseValue((-(2n ** 255n)).toString(), p('int256'))).toBe((-(2n ** 255n)).toString());
  });

  it('integers: rejects out of range, negatives for uint, inexact JSON numbers and non-integers', () => {
    rejects(256, p('uint8'), 'out of range for uint8');
    rejects('128', p('int8'), 'out of range for int8');
    rejects('-129', p('int8'), 'out of range for int8');
    rejects((2n ** 256n).toString(), p('uint256'), 'out of range for uint256');
    rejects(-1, p('uint256'), 'negative value for uint256');
    rejects(2 ** 60, p('uint64'), 'uint64 number beyond 2^53 (precision lost)');
    rejects(1.5, p('uint64'), 'not an integer for uint64');
    rejects('1e18', p('uint256'), 'not an integer for uint256');
    rejects(null, p('uint256'), 'not an integer for uint256');
  });

  it('addresses: checksummed, upper, bare, 32-byte padded, base64 and byte arrays -> lowercase hex', () => {
    const lower = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
    const bytes = Buffer.from(lower.slice(2), 'hex');
    for (const v of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      lower.toUpperCase().replace('0X', '0x'),
      lower.slice(2),
      `0x${'0'.repeat(24)}${lower.slice(2)}`,
      bytes.toString('base64'),
      [...bytes],
      JSON.parse(JSON.stringify(bytes)),
    ]) {
      expect(normaliseValue(v, p('address'))).toBe(lower);
    }
    rejects('0x1234', p('address'), 'not an address');
    rejects(`0x${'1'.repeat(64)}`, p('address'), 'not an address');
    rejects(12, p('address'), 'not an address');
  });

  it('bytes: hex (any case), base64 (std and url-safe), byte arrays, Buffer JSON and Uint8Array -> lowercase hex', () => {
    const buf = Buffer.from([0xfb, 0xff, 0x00, 0x3e, 0x7f]);
    for (const v of [
      '0xFBFF003E7F',
      buf.toString('base64'),
      buf.toString('base64url'),
      [...buf],
      JSON.parse(JSON.stringify(buf)),
      new Uint8Array(buf),
    ]) {
      expect(normaliseValue(v, p('bytes'))).toBe('0xfbff003e7f');
    }
    expect(normaliseValue('', p('bytes'))).toBe('0x');
    expect(normaliseValue('0x', p('bytes'))).toBe('0x');
    expect(normaliseValue('AQID', p('bytes3'))).toBe('0x010203');
    rejects('0x0102', p('bytes3'), 'wrong length for bytes3');
    rejects('0x123', p('bytes'), 'not bytes');
    rejects([1, 256], p('bytes'), 'not bytes');
    rejects('not base64!', p('bytes'), 'not bytes');
  });

  it('bool and string', () => {
    for (const v of [true, 1, '1', 'true']) expect(normaliseValue(v, p('bool'))).toBe(true);
    for (const v of [false, 0, '0', 'false']) expect(normaliseValue(v, p('bool'))).toBe(false);
    rejects(2, p('bool'), 'not a bool');
    expect(normaliseValue('ü ✓ "q"', p('string'))).toBe('ü ✓ "q"');
    rejects(5, p('string'), 'not a string');
  });

  it('arrays and tuples become JSON text with the same rules inside', () => {
    const tuple = p('tuple[]', {
      components: [
        { type: 'address', name: 'who' },
        { type: 'uint256[2]', name: 'amounts' },
        { type: 'bytes', name: 'memo' },
      ],
    } as Partial<AbiParameter>);
    const expected = JSON.stringify([{ who: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', amounts: ['1', MAX], memo: '0x0102' }]);
    // object keyed by name, Go-style capitalised keys, positional arrays, JSON text
    expect(normaliseValue([{ who: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', amounts: [1, MAX], memo: 'AQI=' }], tuple)).toBe(expected);
    expect(normaliseValue([{ Who: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', Amounts: ['0x1', MAX], Memo: [1, 2] }], tuple)).toBe(
      expected,
    );
    expect(normaliseValue([['0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', [1n, BigInt(MAX)], '0x0102']], tuple)).toBe(expected);
    expect(
      normaliseValue(JSON.stringify([{ who: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', amounts: ['1', MAX], memo: '0x0102' }]), tuple),
    ).toBe(expected);
    rejects([{ who: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', amounts: [1], memo: '0x' }], tuple, 'wrong length for uint256[2]');
    rejects([{ who: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', memo: '0x' }], tuple, 'missing tuple component');
    rejects('nope', tuple, 'not an array for tuple[]');
  });

  it('uint8 arrays also come as bytes (Go marshals []uint8 as base64)', () => {
    expect(normaliseValue('AAH/', p('uint8[]'))).toBe(JSON.stringify(['0', '1', '255']));
    expect(normaliseValue([0, 1, 255], p('uint8[]'))).toBe(JSON.stringify(['0', '1', '255']));
  });

  it('indexed dynamic values are their topic hash', () => {
    const hash = `0x${'ab'.repeat(32)}`;
    expect(normaliseValue(hash.toUpperCase().replace('0X', '0x'), p('string', { indexed: true } as Partial<AbiParameter>))).toBe(hash);
    expect(
      normaliseValue(Buffer.from(hash.slice(2), 'hex').toString('base64'), p('uint256[]', { indexed: true } as Partial<AbiParameter>)),
    ).toBe(hash);
  });
});
