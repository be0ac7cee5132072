/**
 * A transaction-like column set and a deterministic row generator shared by the sink tests and
 * bench/experiments/sink-throughput.ts. Rows carry the awkward values on purpose: 78-digit uint256 strings,
 * nulls in every nullable column, unicode and JSON-escaping characters, epoch and far-future times.
 */
import { column, isoDate, isoTime, type Column, type Row } from '../../src/columns/columns.js';
import { mulberry32 } from '../helpers/prng.js';

export const MAX_UINT256 = (2n ** 256n - 1n).toString();

export const transactionColumns: Column[] = [
  column('chain_id', 'int64', 'chain id', false),
  column('block_number', 'int64', 'block number', false),
  column('block_timestamp', 'int64', 'block time, unix seconds', false),
  column('block_time', 'timestamp', 'block time, UTC', false),
  column('block_date', 'date', 'block date, UTC', false),
  column('block_hash', 'string', 'block hash', false),
  column('hash', 'string', 'transaction hash', false),
  column('nonce', 'int64', 'sender nonce'),
  column('transaction_index', 'int32', 'index in block'),
  column('from_address', 'string', 'sender'),
  column('to_address', 'string', 'recipient, null for contract creation'),
  column('value', 'uint256', 'wei transferred'),
  column('gas_price', 'uint256', 'gas price'),
  column('gas', 'int64', 'gas limit'),
  column('function_selector', 'string', '4-byte selector'),
  column('data', 'string', 'input data'),
  column('max_fee_per_gas', 'uint256', 'EIP-1559 max fee'),
  column('max_priority_fee_per_gas', 'uint256', 'EIP-1559 tip'),
  column('transaction_type', 'int32', 'type'),
  column('r', 'uint256', 'signature r'),
  column('s', 'uint256', 'signature s'),
  column('v', 'uint256', 'signature v'),
  column('access_list_json', 'json', 'access list'),
  column('gas_used', 'int64', 'gas used'),
  column('status', 'int32', 'receipt status'),
  column('success', 'bool', 'status == 1'),
  column('decoded_name', 'string', 'decoded function name'),
  column('decoded_json', 'json', 'decoded inputs'),
  column('decode_status', 'string', 'ok | no_abi | error: ...', false),
  column('item_id', 'string', 'stable unique key', false),
];

/** `nibbles` random lowercase hex digits after 0x, as one flat string (like JSON.parse makes). */
function hex(rand: () => number, nibbles: number): string {
  const bytes = Buffer.allocUnsafe(Math.ceil(nibbles / 2));
  for (let i = 0; i < bytes.length; i += 4) {
    const r = (rand() * 4294967296) >>> 0;
    bytes[i] = r & 0xff;
    if (i + 1 < bytes.length) bytes[i + 1] = (r >>> 8) & 0xff;
    if (i + 2 < bytes.length) bytes[i + 2] = (r >>> 16) & 0xff;
    if (i + 3 < bytes.length) bytes[i + 3] = r >>> 24;
  }
  return `0x${bytes.toString('hex').slice(0, nibbles)}`;
}

/** ABI-encoded call data: a selector and 1-6 words holding addresses or amounts (zero-padded). */
function callData(rand: () => number): string {
  let s = hex(rand, 8);
  const words = 1 + ((rand() * 6) | 0);
  for (let w = 0; w < words; w++)
    s += rand() < 0.5 ? `${'0'.repeat(24)}${hex(rand, 40).slice(2)}` : `${'0'.repeat(48)}${hex(rand, 16).slice(2)}`;
  return s;
}

/** A uint of up to maxBits random bits as an exact decimal string (77-78 digits at 256 bits). */
function bigDecimal(rand: () => number, maxBits: number): string {
  const bits = 1 + Math.floor(rand() * maxBits);
  return BigInt(hex(rand, Math.ceil(bits / 4))).toString();
}

const UNICODE = [
  'transfer',
  'héllo wörld',
  '日本語のテキスト',
  'emoji 😀🚀 and ZWJ 👩‍👩‍👧',
  'مرحبا بالعالم',
  'quote " backslash \\ slash /',
  'line\nbreak\ttab\rreturn',
  'control \u0001\u001f chars',
  'combining e\u0301 and \u2028 \u2029 separators',
  '',
];

/** Wallet exports repeat a few hundred counterparties: dictionary encoding should see that. */
const ADDRESSES = ((rand) => Array.from({ length: 300 }, () => hex(rand, 40)))(mulberry32(1));

function blockHash(blockNumber: number): string {
  return hex(mulberry32(blockNumber), 64);
}

/** Row i of a deterministic transaction-like stream (about 1 KB as NDJSON). */
export function makeTransactionRow(i: number, rand: () => number): Row {
  const ts = 1_438_269_973 + i * 12; // from Ethereum genesis-ish, 12 s blocks
  const special = i % 97;
  const isNullRow = special === 13;
  const isCreate = i % 11 === 0;
  const decoded = i % 3 !== 0;
  return {
    chain_id: i % 5 === 0 ? 8453 : 1,
    block_number: 1_000_000 + Math.floor(i / 150),
    block_timestamp: ts,
    block_time: isoTime(ts),
    block_date: isoDate(ts),
    block_hash: blockHash(1_000_000 + Math.floor(i / 150)),
    hash: hex(rand, 64),
    nonce: isNullRow ? null : Math.floor(rand() * 1_000_000),
    transaction_index: isNullRow ? null : i % 150,
    from_address: ADDRESSES[(rand() * ADDRESSES.length) | 0]!,
    to_address: isCreate || isNullRow ? null : ADDRESSES[(rand() * ADDRESSES.length) | 0]!,
    value: isNullRow ? null : special === 1 ? MAX_UINT256 : special === 2 ? '0' : bigDecimal(rand, 100),
    gas_price: isNullRow ? null : bigDecimal(rand, 40),
    gas: isNullRow ? null : special === 3 ? Number.MAX_SAFE_INTEGER : 21_000 + Math.floor(rand() * 500_000),
    function_selector: isCreate || isNullRow ? null : hex(rand, 8),
    data: isNullRow ? null : isCreate ? hex(rand, 400) : callData(rand),
    max_fee_per_gas: isNullRow ? null : bigDecimal(rand, 40),
    max_priority_fee_per_gas: isNullRow ? null : bigDecimal(rand, 34),
    transaction_type: isNullRow ? null : special === 4 ? -2147483648 : special === 5 ? 2147483647 : i % 3,
    r: isNullRow ? null : BigInt(hex(rand, 64)).toString(),
    s: isNullRow ? null : special === 6 ? MAX_UINT256 : bigDecimal(rand, 256),
    v: isNullRow ? null : String(27 + (i % 2)),
    access_list_json: isNullRow ? null : i % 4 === 0 ? '[]' : JSON.stringify([{ address: hex(rand, 40), storageKeys: [hex(rand, 64)] }]),
    gas_used: isNullRow ? null : Math.floor(rand() * 300_000),
    status: isNullRow ? null : i % 50 === 0 ? 0 : 1,
    success: isNullRow ? null : i % 50 !== 0,
    decoded_name: decoded && !isNullRow ? UNICODE[i % UNICODE.length]! : null,
    decoded_json:
      decoded && !isNullRow
        ? JSON.stringify({ to: hex(rand, 40), amount: bigDecimal(rand, 256), memo: UNICODE[(i + 3) % UNICODE.length] })
        : null,
    decode_status: decoded ? 'ok' : i % 6 === 0 ? 'no_abi' : 'error: unknown selector',
    item_id: `${i % 5 === 0 ? 8453 : 1}:${i}`,
  };
}

export function makeTransactionRows(count: number, seed = 42, start = 0): Row[] {
  const rand = mulberry32(seed + start);
  const rows: Row[] = [];
  for (let i = start; i < start + count; i++) rows.push(makeTransactionRow(i, rand));
  return rows;
}

/** Every column type once, for extreme and awkward values (edgeRows). */
export const edgeColumns: Column[] = [
  column('i32', 'int32', 'int32'),
  column('i64', 'int64', 'int64'),
  column('u256', 'uint256', 'uint256'),
  column('s', 'string', 'string'),
  column('b', 'bool', 'bool'),
  column('ts', 'timestamp', 'timestamp'),
  column('d', 'date', 'date'),
  column('j', 'json', 'json'),
  column('required_s', 'string', 'non-nullable string', false),
];

export const edgeRows: Row[] = [
  {
    i32: 2147483647,
    i64: Number.MAX_SAFE_INTEGER,
    u256: MAX_UINT256,
    s: 'nul \u0000 inside',
    b: true,
    ts: '9999-12-31T23:59:59.999999Z',
    d: '9999-12-31',
    j: '{"a":[1,2,{"b":null}],"u":"\\u00e9"}',
    required_s: 'max',
  },
  {
    i32: -2147483648,
    i64: -Number.MAX_SAFE_INTEGER,
    u256: '0',
    s: 'lone \ud800 surrogate',
    b: false,
    ts: '1969-12-31T23:59:59.5Z',
    d: '1900-02-28',
    j: 'null',
    required_s: 'min',
  },
  { i32: null, i64: null, u256: null, s: null, b: null, ts: null, d: null, j: null, required_s: 'all null' },
  { i32: 0, i64: 0, u256: '1', s: '', b: true, ts: '1970-01-01T00:00:00Z', d: '1970-01-01', j: '""', required_s: '' },
  {
    i32: 1,
    i64: 1,
    u256: `1${'0'.repeat(76)}`,
    s: '👩‍👩‍👧 日本 مرحبا e\u0301',
    b: false,
    ts: '2024-02-29T12:00:00.000001Z',
    d: '2000-02-29',
    j: '[]',
    required_s: 'leap',
  },
  { i32: 7, i64: 7, u256: '7', s: 'year one', b: true, ts: '0001-01-01T00:00:00Z', d: '0001-01-01', j: '{}', required_s: 'year 1' },
  // Every nullable key missing: written as nulls.
  { required_s: 'missing keys' },
];
