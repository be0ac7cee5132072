import { parseAbi, type AbiEvent } from 'viem';
import { describe, expect, it } from 'vitest';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { effectiveEvent } from '../../src/decode/effective-event.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import type { EventRecord } from '../../src/source/records.js';
import { ADDRESSES, encodeLog, serviceDecoded, sig } from './fixtures.js';

const WORD = (hex: string) => hex.padStart(64, '0');

function expectRejected(result: { status: string; values: Record<string, unknown> }, status: string | RegExp) {
  if (typeof status === 'string') expect(result.status).toBe(status);
  else expect(result.status).toMatch(status);
  expect(result.values.decode_status).toBe(result.status);
  for (const [name, value] of Object.entries(result.values)) if (name !== 'decode_status') expect(value, name).toBeNull();
}

describe('rows that cannot be decoded are kept with a status and null arg columns', () => {
  const erc20 = sig('erc20Transfer');
  const transfer = encodeLog(erc20.abi, [ADDRESSES[1], ADDRESSES[2], 5n]);

  it('a log of another event (topic0 mismatch) or without topics', () => {
    const approval = encodeLog(sig('erc20Approval').abi, [ADDRESSES[1], ADDRESSES[2], 5n]);
    const decoder = createEventDecoder(erc20);
    expectRejected(decoder.decode(approval), 'error: topic0 does not match the signature');
    expectRejected(decoder.decode({ ...transfer, topics: [] }), 'error: log has no topics');
  });

  it('an ERC-721 Transfer (3 indexed topics) read with the ERC-20 signature (same topic0)', () => {
    const nft = encodeLog(sig('erc721Transfer').abi, [ADDRESSES[1], ADDRESSES[2], 9n]);
    expect(nft.topics[0]).toBe(transfer.topics[0]);
    expectRejected(createEventDecoder(erc20).decode(nft), 'error: log has 3 indexed topics, signature has 2');
  });

  it('data that is too short, has a bad bool, or an out-of-range uint8', () => {
    expectRejected(createEventDecoder(erc20).decode({ ...transfer, data: '0x' }), 'error: data does not match the signature');
    expectRejected(
      createEventDecoder(erc20).decode({ ...transfer, data: transfer.data.slice(0, 40) }),
      'error: data does not match the signature',
    );
    const flag = parseEventSignature('Flag(bool on, uint8 level)');
    const base = encodeLog(flag.abi, [true, 1]);
    expectRejected(createEventDecoder(flag).decode({ ...base, data: `0x${WORD('2')}${WORD('1')}` }), 'error: invalid bool in data');
    expectRejected(createEventDecoder(flag).decode({ ...base, data: `0x${WORD('1')}${WORD('100')}` }), 'error: out of range for uint8');
    expectRejected(createEventDecoder(flag).decode({ ...base, data: `0x${'zz'.repeat(64)}` }), /^error: undecodable log/);
  });

  it('no indexed markers in the signature and no ABI: no_abi (local decoding cannot split topics from data)', () => {
    const bare = parseEventSignature('Transfer(address from, address to, uint256 value)');
    expectRejected(createEventDecoder(bare).decode(transfer), 'no_abi');
    // The service could not decode either: empty or null `decoded`.
    expectRejected(
      createEventDecoder(bare).decode({ ...transfer, decoded: { name: '', signature: '', indexed_params: {}, non_indexed_params: {} } }),
      'no_abi',
    );
    // ...but when the service did decode it, its values are used.
    const decoded = serviceDecoded(erc20.abi, [ADDRESSES[1], ADDRESSES[2], 5n], 1);
    expect(createEventDecoder(bare).decode({ ...transfer, decoded }).values).toEqual({
      arg_from: ADDRESSES[1],
      arg_to: ADDRESSES[2],
      arg_value: '5',
      decode_status: 'ok',
    });
  });

  it("an ABI file supplies the indexed markers the signature lacks (the signature's names are kept)", () => {
    const bare = parseEventSignature('Transfer(address src, address dst, uint256)');
    const abi = parseAbi([
      'event Approval(address indexed owner, address indexed spender, uint256 value)',
      'event Transfer(address indexed from, address indexed to, uint256 value)',
    ]);
    const event: AbiEvent = effectiveEvent(bare, abi);
    expect(event.inputs.map((i) => [i.name, i.indexed])).toEqual([
      ['src', true],
      ['dst', true],
      ['value', undefined],
    ]);
    const decoder = createEventDecoder(bare, { abi });
    expect(decoder.columns.map((c) => c.name)).toEqual(['arg_src', 'arg_dst', 'arg_value', 'decode_status']);
    expect(decoder.decode(transfer).values).toEqual({ arg_src: ADDRESSES[1], arg_dst: ADDRESSES[2], arg_value: '5', decode_status: 'ok' });
    // An ABI without the event changes nothing.
    const other = createEventDecoder(bare, { abi: parseAbi(['event Other(uint256 indexed x)']) });
    expectRejected(other.decode(transfer), 'no_abi');
  });

  it('a row never disappears: a mixed batch keeps every row, in order', () => {
    const decoder = createEventDecoder(erc20);
    const batch: EventRecord[] = [
      transfer,
      { ...transfer, data: '0x' },
      encodeLog(sig('erc20Approval').abi, [ADDRESSES[1], ADDRESSES[2], 1n]),
      encodeLog(erc20.abi, [ADDRESSES[3], ADDRESSES[0], 2n ** 255n]),
    ];
    expect(batch.map((r) => decoder.decode(r).status)).toEqual([
      'ok',
      'error: data does not match the signature',
      'error: topic0 does not match the signature',
      'ok',
    ]);
  });
});
