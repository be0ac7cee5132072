import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { bytesToHex } from '../../src/decode/decoded-values.js';
import { ADDRESSES, UINT256_MAX, encodeLog, locallyUndecodable, serviceDecoded, sig, SIGS } from './fixtures.js';

const address = fc.constantFrom(...ADDRESSES).chain((a) =>
  fc.oneof(
    fc.constant(a),
    fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
  ),
);
const uint256 = fc.oneof(fc.constantFrom(0n, 1n, UINT256_MAX, 2n ** 53n, 2n ** 64n - 1n), fc.bigInt({ min: 0n, max: UINT256_MAX }));
const int256 = fc.oneof(fc.constantFrom(-(2n ** 255n), -1n, 2n ** 255n - 1n), fc.bigInt({ min: -(2n ** 255n), max: 2n ** 255n - 1n }));
const hexBytes = (min: number, max: number) =>
  fc.uint8Array({ minLength: min, maxLength: max }).map((b) => `0x${Buffer.from(b).toString('hex')}`);

/** Values per fixture event, in ABI order. */
const VALUES: Record<keyof typeof SIGS, fc.Arbitrary<unknown[]>> = {
  erc20Transfer: fc.tuple(address, address, uint256),
  erc20Approval: fc.tuple(address, address, uint256),
  erc721Transfer: fc.tuple(address, address, uint256),
  erc1155Single: fc.tuple(address, address, address, uint256, uint256),
  erc1155Batch: fc.tuple(address, address, address, fc.array(uint256, { maxLength: 4 }), fc.array(uint256, { maxLength: 4 })),
  complex: fc.tuple(
    hexBytes(32, 32),
    fc.string(),
    fc.record({
      maker: address,
      amount: fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }),
      tick: fc.integer({ min: -(2 ** 23), max: 2 ** 23 - 1 }),
      extra: hexBytes(0, 40),
    }),
    fc.string({ unit: 'grapheme' }),
    hexBytes(0, 70),
    fc.boolean(),
    int256,
    hexBytes(4, 4),
    fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 6 }),
  ) as fc.Arbitrary<unknown[]>,
};

describe("the service's decoded values normalise to exactly the locally decoded values", () => {
  for (const key of Object.keys(SIGS) as (keyof typeof SIGS)[]) {
    it(`${key}: every service shape (numbers, decimal and hex strings, base64, byte arrays, checksummed addresses)`, () => {
      const parsed = sig(key);
      const serviceFirst = createEventDecoder(parsed, { preferService: true });
      const localOnly = createEventDecoder(parsed, { preferService: false });
      fc.assert(
        fc.property(VALUES[key], fc.nat(1000), (values, variant) => {
          const record = encodeLog(parsed.abi, values);
          const local = localOnly.decode(record);
          expect(local.status).toBe('ok');

          // Local decoding cannot read this copy, so an 'ok' can only come from `decoded`.
          const broken = locallyUndecodable(parsed.abi, record);
          expect(localOnly.decode(broken).status).toMatch(/^error: /);
          const viaService = serviceFirst.decode({ ...broken, decoded: serviceDecoded(parsed.abi, values, variant) });
          expect(viaService).toEqual(local);
        }),
        { numRuns: 150 },
      );
    });
  }

  it('base64 text that begins with "0x" or "0X" is read as base64 where hex cannot be meant', () => {
    // Found by the property above (seed -1465808115): bytes4 0xd1700000 is "0XAAAA==" in base64.
    const parsed = sig('complex');
    const values = [
      `0x${'00'.repeat(32)}`,
      '',
      { maker: ADDRESSES[0], amount: 0n, tick: 0, extra: '0x' },
      '',
      '0x',
      false,
      0n,
      '0xd1700000',
      [],
    ];
    const record = encodeLog(parsed.abi, values);
    const local = createEventDecoder(parsed, { preferService: false }).decode(record);
    expect(local.status).toBe('ok');
    const broken = locallyUndecodable(parsed.abi, record);
    expect(
      createEventDecoder(parsed, { preferService: true }).decode({ ...broken, decoded: serviceDecoded(parsed.abi, values, 874) }),
    ).toEqual(local);
    expect(bytesToHex('0XAAAA==')).toBe('0xd1700000');
    expect(bytesToHex('0xq8')).toBe('0xd31abc');
    // Text that is valid hex stays hex, even where base64 would give another length.
    expect(bytesToHex('0xAA')).toBe('0xaa');
    expect(bytesToHex('0x0102')).toBe('0x0102');
    expect(bytesToHex('0x12345')).toBeNull();
  });

  it('the service path is taken when present and valid (preferService), local first otherwise', () => {
    const parsed = sig('erc20Transfer');
    const record = encodeLog(parsed.abi, [ADDRESSES[1], ADDRESSES[2], 7n]);
    // A service answer that differs from the bytes shows which path produced the row.
    const decoded = serviceDecoded(parsed.abi, [ADDRESSES[1], ADDRESSES[2], 8n], 0);
    expect(createEventDecoder(parsed, { preferService: true }).decode({ ...record, decoded }).values.arg_value).toBe('8');
    expect(createEventDecoder(parsed, { preferService: false }).decode({ ...record, decoded }).values.arg_value).toBe('7');
  });

  it('an invalid service value falls back to local decoding (precision lost, out of range, wrong length)', () => {
    const parsed = sig('complex');
    const decoder = createEventDecoder(parsed);
    const values = [
      `0x${'a1'.repeat(32)}`,
      't',
      { maker: ADDRESSES[1], amount: 2n ** 100n, tick: -5, extra: '0x01' },
      'n',
      '0x02',
      true,
      2n ** 60n,
      '0x01020304',
      [1, 2],
    ];
    const record = encodeLog(parsed.abi, values);
    const expected = createEventDecoder(parsed, { preferService: false }).decode(record);
    const good = serviceDecoded(parsed.abi, values, 1);
    const variants = [
      // int256 2^60 sent as a JSON number: not exact beyond 2^53.
      { ...good, non_indexed_params: { ...good.non_indexed_params, delta: 2 ** 60 } },
      { ...good, non_indexed_params: { ...good.non_indexed_params, flags: [1, 256] } },
      { ...good, non_indexed_params: { ...good.non_indexed_params, selector: '0x0102' } },
      { ...good, non_indexed_params: { ...good.non_indexed_params, isPartial: 'yes' } },
      { ...good, non_indexed_params: { renamed: 1 } },
    ];
    for (const decoded of variants) {
      expect(decoder.decode({ ...record, decoded })).toEqual(expected);
      // ...and when local decoding is impossible too, the row says why.
      const { status, values: row } = decoder.decode({ ...locallyUndecodable(parsed.abi, record), decoded });
      expect(status).toMatch(/^error: /);
      expect(row.arg_order).toBeNull();
    }
  });
});
