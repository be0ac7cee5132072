import { describe, expect, it } from 'vitest';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import { ADDRESSES, UINT256_MAX, encodeLog, expectedColumn, sig, type SIGS } from './fixtures.js';

/** Decodes a log built from `values` without any service `decoded` and checks every arg column. */
function checkRoundTrip(key: keyof typeof SIGS, values: unknown[]) {
  const parsed = sig(key);
  const decoder = createEventDecoder(parsed, {});
  const record = encodeLog(parsed.abi, values);
  const { status, values: row } = decoder.decode(record);
  expect(status).toBe('ok');
  expect(row.decode_status).toBe('ok');
  const argColumns = decoder.columns.filter((c) => c.name !== 'decode_status');
  expect(argColumns).toHaveLength(values.length);
  argColumns.forEach((col, i) => {
    expect(row[col.name], col.name).toEqual(expectedColumn(parsed.abi.inputs[i]!, values[i]));
  });
  return row;
}

describe('local decoding (viem, no service call) yields the encoded values', () => {
  it('ERC-20 Transfer, including uint256 max and the zero address', () => {
    const row = checkRoundTrip('erc20Transfer', [ADDRESSES[1], ADDRESSES[0], UINT256_MAX]);
    expect(Object.keys(row)).toEqual(['arg_from', 'arg_to', 'arg_value', 'decode_status']);
    checkRoundTrip('erc20Transfer', [ADDRESSES[2], ADDRESSES[3], 0n]);
    checkRoundTrip('erc20Transfer', [ADDRESSES[3], ADDRESSES[1], 10n ** 18n + 7n]);
  });

  it('ERC-20 Approval', () => {
    checkRoundTrip('erc20Approval', [ADDRESSES[1], ADDRESSES[3], UINT256_MAX]);
  });

  it('ERC-721 Transfer with the tokenId indexed (three topics, empty data)', () => {
    const row = checkRoundTrip('erc721Transfer', [ADDRESSES[0], ADDRESSES[1], 123456789n]);
    expect(row.arg_token_id).toBe('123456789');
  });

  it('ERC-1155 TransferSingle and TransferBatch (uint256 arrays as JSON of decimal strings)', () => {
    checkRoundTrip('erc1155Single', [ADDRESSES[1], ADDRESSES[0], ADDRESSES[3], 42n, 2n ** 200n]);
    const row = checkRoundTrip('erc1155Batch', [ADDRESSES[1], ADDRESSES[3], ADDRESSES[2], [1n, 2n, UINT256_MAX], [0n, 5n, 10n ** 30n]]);
    expect(JSON.parse(row.arg_ids as string)).toEqual(['1', '2', UINT256_MAX.toString()]);
    checkRoundTrip('erc1155Batch', [ADDRESSES[1], ADDRESSES[3], ADDRESSES[2], [], []]);
  });

  it('an event with a tuple, strings, bytes, bool, negative intN, bytes4 and a uint8 array', () => {
    const order = { maker: ADDRESSES[3], amount: 2n ** 128n - 1n, tick: -887272, extra: '0xdeadBEEF00' };
    const row = checkRoundTrip('complex', [
      `0x${'a1'.repeat(32)}`,
      'indexed-tag',
      order,
      'héllo, wörld ✓',
      '0x000102fffe',
      true,
      -(2n ** 255n),
      '0x12345678',
      [0, 1, 255],
    ]);
    expect(JSON.parse(row.arg_order as string)).toEqual({
      maker: ADDRESSES[3],
      amount: (2n ** 128n - 1n).toString(),
      tick: '-887272',
      extra: '0xdeadbeef00',
    });
    expect(row.arg_delta).toBe((-(2n ** 255n)).toString());
    expect(row.arg_is_partial).toBe(true);
    // Empty dynamic values and the other extremes.
    checkRoundTrip('complex', [
      `0x${'00'.repeat(32)}`,
      '',
      { maker: ADDRESSES[0], amount: 0n, tick: 8388607, extra: '0x' },
      '',
      '0x',
      false,
      2n ** 255n - 1n,
      '0xffffffff',
      [],
    ]);
  });

  it('an event unknown to any registry decodes from its signature alone', () => {
    const parsed = parseEventSignature('SomethingHappened(uint64 indexed when, int8 level, address[2] pair, (uint16, bool)[] items)');
    const values = [
      2n ** 64n - 1n,
      -128,
      [ADDRESSES[1], ADDRESSES[3]],
      [
        [65535, true],
        [0, false],
      ],
    ];
    const decoder = createEventDecoder(parsed);
    const { status, values: row } = decoder.decode(encodeLog(parsed.abi, values));
    expect(status).toBe('ok');
    expect(row.arg_when).toBe((2n ** 64n - 1n).toString());
    expect(row.arg_level).toBe('-128');
    expect(row.arg_pair).toBe(JSON.stringify([ADDRESSES[1], ADDRESSES[3]]));
    // Unnamed tuple components: JSON arrays in ABI order.
    expect(row.arg_items).toBe(
      JSON.stringify([
        ['65535', true],
        ['0', false],
      ]),
    );
  });

  it('unnamed parameters get positional columns and still decode', () => {
    const parsed = parseEventSignature('Transfer(address indexed, address indexed, uint256)');
    const decoder = createEventDecoder(parsed);
    expect(decoder.columns.map((c) => c.name)).toEqual(['arg_0', 'arg_1', 'arg_2', 'decode_status']);
    const { values } = decoder.decode(encodeLog(parsed.abi, [ADDRESSES[1], ADDRESSES[2], 77n]));
    expect(values).toEqual({ arg_0: ADDRESSES[1], arg_1: ADDRESSES[2], arg_2: '77', decode_status: 'ok' });
  });
});
