import fc from 'fast-check';
import { parseAbiItem, type AbiFunction } from 'viem';
import { describe, expect, it } from 'vitest';
import { argColumnNames, eventArgColumns, functionArgColumns, snakeCase } from '../../src/decode/columns.js';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import { ADDRESSES, encodeLog, sig, SIGS } from './fixtures.js';

describe('arg columns', () => {
  it('are named arg_<snake_case name> in ABI order, typed by ABI type', () => {
    const cols = eventArgColumns(sig('complex').abi);
    expect(cols.map((c) => [c.name, c.type])).toEqual([
      ['arg_order_hash', 'string'],
      ['arg_tag', 'string'], // indexed string: the topic hash
      ['arg_order', 'json'],
      ['arg_note', 'string'],
      ['arg_payload', 'string'],
      ['arg_is_partial', 'bool'],
      ['arg_delta', 'string'], // signed: may be negative
      ['arg_selector', 'string'],
      ['arg_flags', 'json'],
    ]);
    expect(cols.every((c) => c.nullable)).toBe(true);
    expect(cols[1]!.description).toContain('keccak256 hash');
  });

  it.each([
    ['tokenId', 'token_id'],
    ['_from', 'from'],
    ['ERC20Token', 'erc20_token'],
    ['tokenURI', 'token_uri'],
    ['URIValue', 'uri_value'],
    ['__weird--Name$', 'weird_name'],
    ['amount0In', 'amount0_in'],
  ])('snake_case(%s) = %s', (name, expected) => {
    expect(snakeCase(name)).toBe(expected);
  });

  it('use the position for unnamed parameters and de-duplicate collisions deterministically', () => {
    const names = argColumnNames([
      { type: 'uint256', name: 'value' },
      { type: 'uint256', name: 'Value' },
      { type: 'uint256', name: '_value' },
      { type: 'uint256' },
      { type: 'uint256', name: '_3' },
      { type: 'uint256', name: 'value_2' },
      { type: 'uint256', name: '$' },
    ]);
    expect(names).toEqual(['arg_value', 'arg_value_2', 'arg_value_3', 'arg_3', 'arg_3_2', 'arg_value_2_2', 'arg_6']);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z0-9_]+$/);
  });

  it('for functions follow the same rules', () => {
    const fn = parseAbiItem('function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes data)') as AbiFunction;
    expect(functionArgColumns(fn).map((c) => [c.name, c.type])).toEqual([
      ['arg_amount0_out', 'uint256'],
      ['arg_amount1_out', 'uint256'],
      ['arg_to', 'string'],
      ['arg_data', 'string'],
    ]);
  });

  it('are a pure function of the signature: same on every parse, unchanged by the rows decoded', () => {
    for (const key of Object.keys(SIGS) as (keyof typeof SIGS)[]) {
      const before = structuredClone(createEventDecoder(sig(key)).columns);
      expect(createEventDecoder(parseEventSignature(SIGS[key])).columns).toEqual(before);
    }
    const parsed = sig('erc20Transfer');
    const decoder = createEventDecoder(parsed);
    const columns = structuredClone(decoder.columns);
    const names = columns.map((c) => c.name);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), fc.boolean(), (value, corrupt) => {
        let record = encodeLog(parsed.abi, [ADDRESSES[1], ADDRESSES[2], value]);
        if (corrupt) record = { ...record, data: '0x1234' };
        const { values } = decoder.decode(record);
        // Every row has exactly the declared columns, whatever the data (ok or error).
        expect(Object.keys(values)).toEqual(names);
      }),
      { numRuns: 100 },
    );
    expect(decoder.columns).toEqual(columns);
  });
});
