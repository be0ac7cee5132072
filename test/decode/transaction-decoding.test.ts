import fc from 'fast-check';
import { encodeFunctionData, parseAbi, type AbiFunction } from 'viem';
import { describe, expect, it } from 'vitest';
import { createTransactionDecoder } from '../../src/decode/transaction-decoder.js';
import type { TransactionRecord } from '../../src/source/records.js';
import { ADDRESSES, expectedColumn, serviceShape, UINT256_MAX } from './fixtures.js';

const ABI = parseAbi([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function fill((address maker, uint128 amount, bytes extra) order, int24[] ticks, bytes32 salt, bool strict, string memo)',
]);
const fn = (name: string) => ABI.find((i) => i.type === 'function' && i.name === name) as AbiFunction;

function tx(data: string, extra: Partial<TransactionRecord> = {}): TransactionRecord {
  return {
    chain_id: 1,
    block_number: 1,
    block_hash: `0x${'ab'.repeat(32)}`,
    block_timestamp: 1_700_000_000,
    hash: `0x${'cd'.repeat(32)}`,
    nonce: 0,
    transaction_index: 0,
    from_address: ADDRESSES[1],
    to_address: ADDRESSES[3],
    value: '0',
    gas_price: '1',
    gas: 21000,
    function_selector: data.slice(0, 10),
    data,
    max_fee_per_gas: null,
    max_priority_fee_per_gas: null,
    transaction_type: 2,
    r: null,
    s: null,
    v: null,
    access_list_json: null,
    authorization_list_json: null,
    contract_address: null,
    gas_used: 21000,
    cumulative_gas_used: 21000,
    effective_gas_price: '1',
    blob_gas_used: null,
    blob_gas_price: null,
    logs_bloom: null,
    status: 1,
    decoded: null,
    ...extra,
  };
}

/** Expected decoded_inputs_json, from the encoded arguments. */
function expectedInputs(f: AbiFunction, args: readonly unknown[]): string {
  return JSON.stringify(
    Object.fromEntries(
      f.inputs.map((p, i) => {
        const col = expectedColumn(p, args[i]);
        const structured = p.type.startsWith('tuple') || p.type.endsWith(']');
        return [p.name, structured ? JSON.parse(col as string) : col];
      }),
    ),
  );
}

function serviceInputs(f: AbiFunction, args: readonly unknown[], variant: number) {
  return JSON.parse(JSON.stringify(Object.fromEntries(f.inputs.map((p, i) => [p.name, serviceShape(p, args[i], variant + i)]))));
}

const fillArgs = fc.tuple(
  fc.record({
    maker: fc.constantFrom(...ADDRESSES),
    amount: fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }),
    extra: fc.uint8Array({ maxLength: 40 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
  }),
  fc.array(fc.integer({ min: -(2 ** 23), max: 2 ** 23 - 1 }), { maxLength: 4 }),
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
  fc.boolean(),
  fc.string(),
);

describe('transaction decoding', () => {
  const decoder = createTransactionDecoder({ abi: ABI });

  it('declares its four columns', () => {
    expect(decoder.columns.map((c) => [c.name, c.type])).toEqual([
      ['decoded_function_name', 'string'],
      ['decoded_signature', 'string'],
      ['decoded_inputs_json', 'json'],
      ['decode_status', 'string'],
    ]);
  });

  it('decodes calldata locally with an ABI file', () => {
    const args = [ADDRESSES[2], UINT256_MAX] as const;
    const { status, values } = decoder.decode(tx(encodeFunctionData({ abi: ABI, functionName: 'transfer', args })));
    expect(status).toBe('ok');
    expect(values).toEqual({
      decoded_function_name: 'transfer',
      decoded_signature: 'transfer(address,uint256)',
      decoded_inputs_json: expectedInputs(fn('transfer'), args),
      decode_status: 'ok',
    });
  });

  it("the service's decoded inputs (every shape) give the same values as local decoding", () => {
    const localOnly = createTransactionDecoder({ abi: ABI, preferService: false });
    fc.assert(
      fc.property(fillArgs, fc.nat(100), (args, variant) => {
        const data = encodeFunctionData({ abi: ABI, functionName: 'fill', args: args as never });
        const local = localOnly.decode(tx(data));
        expect(local.status).toBe('ok');
        expect(local.values.decoded_inputs_json).toBe(expectedInputs(fn('fill'), args));
        // Calldata of another selector: only `decoded` can produce this row.
        const decoded = {
          name: 'fill',
          signature: 'fill((address,uint128,bytes),int24[],bytes32,bool,string)',
          inputs: serviceInputs(fn('fill'), args, variant),
        };
        const viaService = decoder.decode(tx(`0x${data.slice(10)}`.replace(/^0x/, '0xdeadbeef'), { decoded }));
        expect(viaService).toEqual(local);
      }),
      { numRuns: 150 },
    );
  });

  it('without an ABI, a service signature with names types the inputs; without names they are normalised generically', () => {
    const bare = createTransactionDecoder({});
    const data = encodeFunctionData({ abi: ABI, functionName: 'approve', args: [ADDRESSES[1], 5n] });
    const named = bare.decode(
      tx(data, {
        decoded: {
          name: 'approve',
          signature: 'function approve(address spender, uint256 amount)',
          inputs: { spender: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=', amount: 5 },
        },
      }),
    );
    expect(named.values).toEqual({
      decoded_function_name: 'approve',
      decoded_signature: 'approve(address,uint256)',
      decoded_inputs_json: JSON.stringify({ spender: ADDRESSES[0], amount: '5' }),
      decode_status: 'ok',
    });
    const unnamed = bare.decode(
      tx(data, {
        decoded: {
          name: 'approve',
          signature: 'approve(address,uint256)',
          inputs: { spender: '0xD8dA6BF26964aF9D7eEd9e03E53415D37aA96045', amount: 5 },
        },
      }),
    );
    expect(unnamed.status).toBe('ok');
    expect(unnamed.values.decoded_signature).toBe('approve(address,uint256)');
    expect(JSON.parse(unnamed.values.decoded_inputs_json as string)).toEqual({ spender: ADDRESSES[1], amount: '5' });
    const noSignature = bare.decode(tx(data, { decoded: { name: 'approve', signature: '', inputs: { amount: 2 ** 40, data: 'AQI=' } } }));
    expect(noSignature.values.decoded_signature).toBeNull();
    // No types known: integers become decimal strings, other strings are kept as sent.
    expect(JSON.parse(noSignature.values.decoded_inputs_json as string)).toEqual({ amount: String(2 ** 40), data: 'AQI=' });
    // ... but a JSON number beyond 2^53 may have been rounded by JSON.parse: never exported as if exact.
    const lossy = bare.decode(tx(data, { decoded: { name: 'approve', signature: '', inputs: { amount: 1e21, data: 'AQI=' } } }));
    expect(lossy.status).toBe('error: number beyond 2^53 (precision lost)');
    expect(lossy.values.decoded_inputs_json).toBeNull();
  });

  it('keeps rows it cannot decode: no_abi, no_calldata, error', () => {
    const unknown = decoder.decode(tx('0x12345678'));
    expect(unknown.values).toEqual({
      decoded_function_name: null,
      decoded_signature: null,
      decoded_inputs_json: null,
      decode_status: 'no_abi',
    });
    expect(decoder.decode(tx('0x')).status).toBe('no_calldata');
    const data = encodeFunctionData({ abi: ABI, functionName: 'transfer', args: [ADDRESSES[1], 1n] });
    const truncated = decoder.decode(tx(data.slice(0, 40)));
    expect(truncated.status).toBe('error: calldata does not match the ABI');
    expect(truncated.values.decoded_inputs_json).toBeNull();
    // A service answer that does not fit the ABI falls back to local decoding.
    const mismatched = decoder.decode(
      tx(data, { decoded: { name: 'transfer', signature: '', inputs: { recipient: ADDRESSES[1], value: 1 } } }),
    );
    expect(mismatched.values.decoded_inputs_json).toBe(JSON.stringify({ to: ADDRESSES[1], amount: '1' }));
  });
});
