/**
 * Each encoding the open-source indexer uses for decoded values (packages/sandbox/src/go-values.ts, the
 * sandbox's `goValues` knob) gives the same column values as the contract's encodings: the wire
 * text is what the sandbox sends (bare JSON numbers beyond 2^53 included), parsed with JSON.parse
 * as the client does.
 */
import { encodeFunctionData, parseAbi, parseAbiItem, type AbiEvent, type AbiFunction } from 'viem';
import { describe, expect, it } from 'vitest';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import { createTransactionDecoder } from '../../src/decode/transaction-decoder.js';
import { ERC1155_ABI, RICH_ABI } from '@insight-export/sandbox';
import { goDecodedEvent, goDecodedTransaction, jsonText } from '@insight-export/sandbox';
import type { DecodedEvent, DecodedTransaction, EventRecord, TransactionRecord } from '../../src/source/records.js';
import { ADDRESSES, encodeLog, locallyUndecodable } from './fixtures.js';

/** What the client hands the decoder: the indexer's JSON text parsed with JSON.parse. */
const wire = <T>(value: T): T => JSON.parse(jsonText({ value }, true)).value as T;

function tx(data: string, decoded: DecodedTransaction | null): TransactionRecord {
  return { hash: `0x${'cd'.repeat(32)}`, data, decoded } as unknown as TransactionRecord;
}

const settle = RICH_ABI[0] as AbiFunction;
const BIG = 2n ** 60n + 12_345n; // beyond 2^53: JSON.parse rounds it
const settleArgs = [
  { account: ADDRESSES[1], delta: -(10n ** 30n + 7n), limits: [BIG, 3n], memo: '0x0102abcdef' },
  [`0x${'11'.repeat(32)}`, `0x${'ab'.repeat(32)}`],
  -(2n ** 60n + 1n),
  '0xdeadbeef',
] as const;
const settleData = encodeFunctionData({ abi: [settle], functionName: 'settle', args: settleArgs as never });
const settleExpected = {
  order: [ADDRESSES[1], (-(10n ** 30n + 7n)).toString(), [BIG.toString(), '3'], '0x0102abcdef'],
  refs: [`0x${'11'.repeat(32)}`, `0x${'ab'.repeat(32)}`],
  shift: (-(2n ** 60n + 1n)).toString(),
  tag: '0xdeadbeef',
};

describe('transactions: the indexer encodings give the canonical decoded_inputs_json', () => {
  const bare = createTransactionDecoder({});
  const decodeSettle = () => bare.decode(tx(settleData, wire(goDecodedTransaction(RICH_ABI, settleData))));

  it('sends the values the way Go does (the encodings below are really on the wire)', () => {
    const text = jsonText(goDecodedTransaction(RICH_ABI, settleData), true);
    expect(text).toContain(`"limits":[${BIG},3]`); // bare big ints in a fixed array inside a tuple
    expect(text).toContain(`"shift":-${2n ** 60n + 1n}`); // int64 beyond 2^53, bare at the top level
    expect(text).toContain('"memo":"AQKrze8="'); // bytes in base64
    expect(text).toContain('"tag":[222,173,190,239]'); // bytesN as numbers
    expect(Object.keys(JSON.parse(text).inputs)).toEqual(['order', 'refs', 'shift', 'tag']); // sorted keys
  });

  it('big integers in tuples, fixed arrays and int64 are exact (never the rounded JSON number)', () => {
    const r = decodeSettle();
    expect(r.status).toBe('ok');
    expect(JSON.parse(r.values.decoded_inputs_json as string)).toEqual(settleExpected);
  });

  it('bytes as base64 and bytesN as arrays of numbers are lowercase hex', () => {
    const inputs = JSON.parse(decodeSettle().values.decoded_inputs_json as string);
    expect(inputs.order[3]).toBe('0x0102abcdef');
    expect(inputs.tag).toBe('0xdeadbeef');
    expect(inputs.refs).toEqual(settleExpected.refs);
  });

  it("the service's sorted keys give the ABI order of the contract's encodings", () => {
    const safe = ERC1155_ABI[0] as AbiFunction;
    const data = encodeFunctionData({
      abi: [safe],
      functionName: 'safeTransferFrom',
      args: [ADDRESSES[1], ADDRESSES[2], 7n, 9n, '0x00ff'],
    });
    const go = wire(goDecodedTransaction(ERC1155_ABI, data));
    expect(Object.keys(go.inputs)).toEqual(['data', 'from', 'id', 'to', 'value']);
    const contract: DecodedTransaction = {
      name: 'safeTransferFrom',
      signature: 'safeTransferFrom(address,address,uint256,uint256,bytes)',
      inputs: { from: ADDRESSES[1], to: ADDRESSES[2], id: '7', value: '9', data: '0x00ff' },
    };
    const viaGo = bare.decode(tx(data, go));
    expect(viaGo.values).toEqual(bare.decode(tx(data, contract)).values);
    expect(viaGo.values.decoded_inputs_json).toBe(
      JSON.stringify({ from: ADDRESSES[1], to: ADDRESSES[2], id: '7', value: '9', data: '0x00ff' }),
    );
  });

  it('a failed decode ({"name":"", "inputs": null}) is undecoded: no_abi, or decoded locally with an ABI', () => {
    const failed = wire(goDecodedTransaction(null, settleData));
    expect(failed).toEqual({ name: '', signature: '', inputs: null });
    expect(bare.decode(tx(settleData, failed)).status).toBe('no_abi');
    const withAbi = createTransactionDecoder({ abi: RICH_ABI });
    const r = withAbi.decode(tx(settleData, failed));
    expect(r.status).toBe('ok');
    expect(JSON.parse(r.values.decoded_inputs_json as string).order).toEqual({
      account: ADDRESSES[1],
      delta: settleExpected.order[1],
      limits: settleExpected.order[2],
      memo: '0x0102abcdef',
    });
  });
});

const MIXED =
  'Mixed(uint8 indexed level, int64 indexed drift, bytes4 indexed code, bytes2 flag, bytes data, bytes32 ref, (uint256 a, bytes b) t, uint256[2] pair, uint64 big)';

describe('events: the indexer encodings give the canonical arg columns', () => {
  const sig = parseEventSignature(MIXED);
  const event = sig.abi;
  const values = [
    7,
    -5n,
    '0xcafebabe',
    '0xbeef',
    '0x010203',
    `0x${'42'.repeat(32)}`,
    { a: BIG, b: '0x0a0b' },
    [BIG + 1n, 2n],
    2n ** 63n + 5n,
  ] as const;
  const log = encodeLog(event, values as unknown as unknown[]);
  const go = (item: AbiEvent = event) => wire(goDecodedEvent(item, log.topics, log.data));
  const expected = {
    arg_level: '7',
    arg_drift: '-5',
    arg_code: '0xcafebabe',
    arg_flag: '0xbeef',
    arg_data: '0x010203',
    arg_ref: `0x${'42'.repeat(32)}`,
    arg_t: JSON.stringify({ a: BIG.toString(), b: '0x0a0b' }),
    arg_pair: JSON.stringify([(BIG + 1n).toString(), '2']),
    arg_big: (2n ** 63n + 5n).toString(),
    decode_status: 'ok',
  };
  const decode = (decoded: DecodedEvent | null, signature = MIXED) =>
    createEventDecoder(parseEventSignature(signature)).decode({ ...log, decoded } as EventRecord).values;

  it('sends the values the way Go does', () => {
    const d = go();
    expect(d.indexed_params).toEqual({ code: `0xcafebabe${'0'.repeat(56)}`, drift: (2n ** 256n - 5n).toString(), level: '7' });
    expect(d.non_indexed_params.flag).toEqual([0xbe, 0xef]); // bytes1..31: numbers
    expect(d.non_indexed_params.data).toBe('0x010203'); // top-level bytes: hex
    expect(d.non_indexed_params.t).toEqual({ a: Number(BIG), b: 'Cgs=' }); // rounded by JSON.parse; bytes in a tuple: base64
    expect(jsonText(goDecodedEvent(event, log.topics, log.data), true)).toContain(`"big":${2n ** 63n + 5n}`);
  });

  it('indexed small ints as strings, negative indexed ints read as unsigned, indexed bytesN as the whole topic: exact', () => {
    expect(decode(go())).toEqual(expected);
  });

  it('bytes1..31 as arrays of numbers, bytes in tuples as base64, big ints as bare numbers: exact', () => {
    const local = decode(null);
    expect(local).toEqual(expected);
    expect(decode(go())).toEqual(local);
  });

  it('unnamed params keyed "0", "1" and unnamed tuple components "field0": the same values', () => {
    const unnamed = 'Mixed(uint8 indexed, int64 indexed, bytes4 indexed, bytes2, bytes, bytes32, (uint256, bytes), uint256[2], uint64)';
    const item = parseAbiItem(`event ${unnamed}`) as AbiEvent;
    const d = go(item);
    expect(Object.keys(d.non_indexed_params).sort()).toEqual(['3', '4', '5', '6', '7', '8']);
    expect(Object.keys(d.non_indexed_params['6'] as object)).toEqual(['field0', 'field1']);
    const values = decode(d, unnamed);
    expect(values).toEqual({
      arg_0: expected.arg_level,
      arg_1: expected.arg_drift,
      arg_2: expected.arg_code,
      arg_3: expected.arg_flag,
      arg_4: expected.arg_data,
      arg_5: expected.arg_ref,
      arg_6: JSON.stringify([BIG.toString(), '0x0a0b']),
      arg_7: expected.arg_pair,
      arg_8: expected.arg_big,
      decode_status: 'ok',
    });
  });

  it('unnamed tuple components "field0" are read from the service when its values are exact', () => {
    const unnamed = 'Small((uint256, bytes) t)';
    const item = parseAbiItem(`event ${unnamed}`) as AbiEvent;
    const small = encodeLog(item, [[5n, '0x0a0b']] as unknown as unknown[]);
    const decoded = wire(goDecodedEvent(item, small.topics, small.data));
    expect(decoded.non_indexed_params).toEqual({ t: { field0: 5, field1: 'Cgs=' } });
    // only the service's values can be read: the record's data is not hex
    const record = { ...locallyUndecodable(item, small), decoded } as EventRecord;
    expect(createEventDecoder(parseEventSignature(unnamed)).decode(record).values).toEqual({
      arg_t: JSON.stringify(['5', '0x0a0b']),
      decode_status: 'ok',
    });
  });

  it('a failed decode ({"name":""}) is undecoded: decoded locally from the topics and data', () => {
    const failed = wire(goDecodedEvent(parseAbi(['event Mixed(uint8 indexed level)'])[0] as AbiEvent, [], '0x'));
    expect(failed).toEqual({ name: '', signature: '', indexed_params: null, non_indexed_params: null });
    expect(decode(failed)).toEqual(expected);
  });
});
