import fc from 'fast-check';
import { decodeEventLog, toEventSelector, type AbiEvent, type AbiParameter, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { formatAbiItem } from 'viem/utils';
import { normaliseValue } from '../../src/decode/decoded-values.js';
import { decodeStaticWords, staticLayout } from '../../src/decode/static-words.js';
import { createEventDecoder } from '../../src/decode/event-decoder.js';
import { parseEventSignature } from '../../src/abi/event-signature.js';
import { encodeLog, expectedColumn } from './fixtures.js';

/** A random static one-word type and a random value of it. */
const staticParam: fc.Arbitrary<{ type: string; value: unknown }> = fc.oneof(
  fc
    .constant('address')
    .chain((type) => fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => ({ type, value: `0x${Buffer.from(b).toString('hex')}` }))),
  fc.boolean().map((value) => ({ type: 'bool', value })),
  fc
    .integer({ min: 1, max: 32 })
    .chain((bytes) => fc.bigInt({ min: 0n, max: 2n ** BigInt(bytes * 8) - 1n }).map((value) => ({ type: `uint${bytes * 8}`, value }))),
  fc
    .integer({ min: 1, max: 32 })
    .chain((bytes) =>
      fc
        .bigInt({ min: -(2n ** BigInt(bytes * 8 - 1)), max: 2n ** BigInt(bytes * 8 - 1) - 1n })
        .map((value) => ({ type: `int${bytes * 8}`, value })),
    ),
  fc
    .integer({ min: 1, max: 32 })
    .chain((size) =>
      fc
        .uint8Array({ minLength: size, maxLength: size })
        .map((b) => ({ type: `bytes${size}`, value: `0x${Buffer.from(b).toString('hex')}` })),
    ),
);

/** A random event of 1-6 static parameters, up to 3 of them indexed, with values. */
const staticEvent = fc.array(fc.tuple(staticParam, fc.boolean()), { minLength: 1, maxLength: 6 }).map((params) => {
  let indexedLeft = 3;
  const inputs = params.map(([p, wantIndexed], i) => {
    const indexed = wantIndexed && indexedLeft-- > 0;
    return { type: p.type, name: `p${i}`, indexed } as AbiParameter & { indexed: boolean };
  });
  const event: AbiEvent = { type: 'event', name: 'Random', inputs };
  return { event, values: params.map(([p]) => p.value) };
});

function viemColumns(event: AbiEvent, topics: string[], data: string) {
  const { args } = decodeEventLog({ abi: [event], topics: topics as [Hex], data: data as Hex, strict: true });
  return event.inputs.map((p) => normaliseValue((args as Record<string, unknown>)[p.name as string], p));
}

describe('static-word fast path', () => {
  it('round-trips random values of static types: encode -> local decode -> normalised column values', () => {
    fc.assert(
      fc.property(staticEvent, ({ event, values }) => {
        const record = encodeLog(event, values);
        const expected = event.inputs.map((p, i) => expectedColumn(p, values[i]));
        const layout = staticLayout(event);
        expect(layout).not.toBeNull();
        expect(decodeStaticWords(layout!, record.topics, record.data)).toEqual(expected);
        expect(viemColumns(event, record.topics, record.data)).toEqual(expected);
        // Through the public decoder as well (built from the event's human signature).
        const parsed = parseEventSignature(
          `Random(${event.inputs.map((p) => `${p.type}${(p as { indexed?: boolean }).indexed ? ' indexed' : ''} ${p.name}`).join(', ')})`,
        );
        const row = createEventDecoder(parsed).decode(record).values;
        expect(Object.values(row)).toEqual([...expected, 'ok']);
      }),
      { numRuns: 500 },
    );
  });

  it('on arbitrary (also non-canonical) words it either declines or agrees with viem', () => {
    const word = fc.oneof(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      // mostly-zero and mostly-0xff words hit the padding checks
      fc
        .tuple(fc.integer({ min: 0, max: 31 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.boolean())
        .map(([keep, bytes, ones]) => bytes.map((b, i) => (i < keep ? (ones ? 0xff : 0) : b))),
    );
    fc.assert(
      fc.property(staticEvent, fc.array(word, { minLength: 6, maxLength: 6 }), ({ event }, words) => {
        const hexWords = words.map((w) => Buffer.from(w).toString('hex'));
        const indexedCount = event.inputs.filter((p) => (p as { indexed?: boolean }).indexed).length;
        const topics = [toEventSelector(formatAbiItem(event)), ...hexWords.slice(0, indexedCount).map((w) => `0x${w}`)];
        const data = `0x${hexWords.slice(indexedCount, event.inputs.length).join('')}`;
        const fast = decodeStaticWords(staticLayout(event)!, topics, data);
        let viem: unknown[] | 'throws';
        try {
          viem = viemColumns(event, topics, data);
        } catch {
          viem = 'throws';
        }
        if (fast !== null) expect(fast).toEqual(viem);
      }),
      { numRuns: 500 },
    );
  });

  it('declines what it cannot read exactly: trailing data, short data, non-hex', () => {
    const event = parseEventSignature('Transfer(address indexed from, address indexed to, uint256 value)').abi;
    const record = encodeLog(event, ['0x' + '12'.repeat(20), '0x' + '34'.repeat(20), 5n]);
    const layout = staticLayout(event)!;
    expect(decodeStaticWords(layout, record.topics, record.data)).not.toBeNull();
    expect(decodeStaticWords(layout, record.topics, `${record.data}00`)).toBeNull();
    expect(decodeStaticWords(layout, record.topics, record.data.slice(0, -2))).toBeNull();
    expect(decodeStaticWords(layout, record.topics, `${record.data.slice(0, -2)}zz`)).toBeNull();
    expect(staticLayout(parseEventSignature('E(string s)').abi)).toBeNull();
  });
});
