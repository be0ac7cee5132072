/**
 * Decode throughput (rows/s, one core): ERC-20 Transfer decoded locally (static-word fast path,
 * and viem decodeEventLog) vs normalising the service's `decoded` object; plus a dynamic-type
 * event (viem only) and transactions.
 *
 *   npx tsx bench/experiments/decode-throughput.ts [rows=200000]
 */
import { decodeEventLog, encodeFunctionData, getAddress, parseAbi, type Hex } from 'viem';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import { createTransactionDecoder } from '../../src/decode/transaction-decoder.js';
import type { EventRecord, TransactionRecord } from '../../src/source/records.js';
import { encodeLog, serviceDecoded, SIGS } from '../../test/decode/fixtures.js';

const ROWS = Number(process.argv[2] ?? 200_000);
const REPEATS = 5;

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}
const rand = seeded(42);
const randomHex = (bytes: number) => {
  let out = '0x';
  for (let i = 0; i < bytes; i++) out += (rand() & 0xff).toString(16).padStart(2, '0');
  return out;
};
const randomAmount = () => (BigInt(rand()) << BigInt(rand() % 200)) + BigInt(rand());

function measure(label: string, records: readonly unknown[], fn: (r: never) => unknown): number {
  const rates: number[] = [];
  let sink = 0;
  for (let rep = 0; rep < REPEATS + 1; rep++) {
    const t0 = performance.now();
    for (const r of records) if (fn(r as never)) sink++;
    const seconds = (performance.now() - t0) / 1000;
    if (rep > 0) rates.push(records.length / seconds); // first run warms up the JIT
  }
  rates.sort((a, b) => a - b);
  const median = rates[Math.floor(rates.length / 2)] as number;
  console.log(`| ${label.padEnd(58)} | ${Math.round(median).toLocaleString('en-US').padStart(11)} |`);
  return sink;
}

const transfer = parseEventSignature(SIGS.erc20Transfer);
const transferValues = Array.from({ length: ROWS }, () => [randomHex(20), randomHex(20), randomAmount()]);
const transferLogs: EventRecord[] = transferValues.map((v) => encodeLog(transfer.abi, v));
const transferService: EventRecord[] = transferValues.map((v, i) => ({
  ...transferLogs[i]!,
  // realistic shapes: checksummed addresses, value as decimal string
  decoded: serviceDecoded(transfer.abi, [getAddress(v[0] as string), getAddress(v[1] as string), v[2]], 1),
}));

const complex = parseEventSignature(SIGS.complex);
const complexRows = Math.max(1, Math.floor(ROWS / 4));
const complexLogs: EventRecord[] = Array.from({ length: complexRows }, () =>
  encodeLog(complex.abi, [
    randomHex(32),
    'tag',
    { maker: randomHex(20), amount: randomAmount() & (2n ** 128n - 1n), tick: -(rand() % 800000), extra: randomHex(rand() % 40) },
    'note '.repeat(rand() % 8),
    randomHex(rand() % 100),
    (rand() & 1) === 1,
    -randomAmount(),
    randomHex(4),
    [1, 2, 3],
  ]),
);

const erc20Abi = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);
const txs: TransactionRecord[] = transferValues.slice(0, complexRows).map(
  (v) =>
    ({
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [v[0] as Hex, v[2] as bigint] }),
      decoded: null,
    }) as unknown as TransactionRecord,
);

const fast = createEventDecoder(transfer, { preferService: false });
const viemOnly = createEventDecoder(transfer, { preferService: false, fastPath: false });
const service = createEventDecoder(transfer, { preferService: true });
const complexDecoder = createEventDecoder(complex, { preferService: false });
const txDecoder = createTransactionDecoder({ abi: erc20Abi });
const positional = [{ ...transfer.abi, inputs: transfer.abi.inputs.map(({ name: _n, ...rest }) => rest) }];

console.log(`node ${process.version}, ${ROWS.toLocaleString('en-US')} ERC-20 rows, median of ${REPEATS} runs`);
console.log('| decoder | rows/s |');
console.log('|---|---|');
measure('viem decodeEventLog only (no normalisation), ERC-20 Transfer', transferLogs, (r: EventRecord) =>
  decodeEventLog({ abi: positional, topics: r.topics as [Hex], data: r.data as Hex, strict: true }),
);
measure('EventDecoder local, viem path (fastPath: false), ERC-20', transferLogs, (r: EventRecord) => viemOnly.decode(r));
measure('EventDecoder local, static-word fast path, ERC-20', transferLogs, (r: EventRecord) => fast.decode(r));
measure('EventDecoder service `decoded` normalisation, ERC-20', transferService, (r: EventRecord) => service.decode(r));
measure('EventDecoder local, viem (dynamic types: tuple/string/bytes/array)', complexLogs, (r: EventRecord) => complexDecoder.decode(r));
measure('TransactionDecoder local (ABI file), transfer(address,uint256)', txs, (r: TransactionRecord) => txDecoder.decode(r));
