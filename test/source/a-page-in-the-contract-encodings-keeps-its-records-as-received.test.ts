import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { normaliseListResponse } from '../../src/source/response-records.js';
import { markWirePage, wireSourceOf } from '../../src/source/wire-page.js';
import type { TransactionRecord } from '../../src/source/records.js';
import { closeAfterEach } from '../helpers/close-after-each.js';
import { fakeServerAndClient, WALLET, wireMeta, wireTransaction } from './fixtures.js';

const closing = closeAfterEach();

/** A transaction exactly as the contract encodes it: nothing the normaliser would convert. */
function contractTransaction(i: number): Record<string, unknown> {
  return { ...wireTransaction(i), contract_address: null, authorization_list_json: null, decoded: null };
}

function page(records: Record<string, unknown>[], text?: (envelope: object) => string): { text: string; json: unknown } {
  const envelope = { meta: wireMeta({ total_items: records.length }), data: records, aggregations: null };
  const body = text ? text(envelope) : JSON.stringify(envelope);
  return { text: body, json: JSON.parse(body) };
}

function mark(body: { text: string; json: unknown }): TransactionRecord[] {
  const records = normaliseListResponse(body.json, 'test', 'transactions', false).data;
  markWirePage(body.text, Buffer.from(body.text), body.json, records);
  return records;
}

/** The records a marked page's bytes hold, as a JSON reader sees them. */
function membersOf(record: object): unknown[] {
  return JSON.parse(`[${wireSourceOf(record)!.page.members.toString('utf8')}]`) as unknown[];
}

describe('a page in the contract encodings keeps its records as received', () => {
  it('marks each record with its page and position; the page holds exactly the wire records', () => {
    const wire = [0, 1, 2, 3].map(contractTransaction);
    const records = mark(page(wire));
    expect(records.map((r) => wireSourceOf(r)?.index)).toEqual([0, 1, 2, 3]);
    expect(new Set(records.map((r) => wireSourceOf(r)?.page)).size).toBe(1);
    expect(wireSourceOf(records[0]!)!.page.count).toBe(4);
    expect(membersOf(records[0]!)).toEqual(wire);
  });

  it('finds the data array whatever the envelope looks like around it', () => {
    const wire = [0, 1].map(contractTransaction);
    const layouts: [string, (e: object) => string][] = [
      ['pretty-printed', (e) => JSON.stringify(e, null, 2)],
      ['data first', (e) => JSON.stringify({ data: (e as { data: unknown }).data, meta: wireMeta() })],
      ['a "data" key in meta first', (e) => JSON.stringify({ meta: wireMeta({ data: [1] }), data: (e as { data: unknown }).data })],
      ['aggregations after data', (e) => JSON.stringify({ ...e, aggregations: [{ n: [1] }] })],
    ];
    for (const [name, layout] of layouts) {
      const records = mark(page(wire, layout));
      const seen = records[0] && wireSourceOf(records[0])?.page ? membersOf(records[0]) : null;
      // The meta with its own "data" cannot be proved from the first "data" key: row by row then.
      if (name === 'a "data" key in meta first') expect(seen, name).toBeNull();
      else expect(seen, name).toEqual(wire);
    }
  });

  it('leaves a page unmarked when any record is not what its row holds, or the bytes could read differently', () => {
    const cases: [string, (r: Record<string, unknown>) => void][] = [
      ['a block number in hex', (r) => (r.block_number = '0x121eac1')],
      ['a checksummed address', (r) => (r.from_address = '0x1111111111111111111111111111111111111111'.replace('0x1', '0xA'))],
      ['a uint256 as a JSON number', (r) => (r.value = 1000)],
      ['input data left out (the row says 0x)', (r) => delete r.data],
      ['a chain id with a leading zero', (r) => (r.chain_id = '01')],
      ['EIP-1559 fees of "0" on a legacy transaction (the row says null)', (r) => ((r.transaction_type = 0), (r.max_fee_per_gas = '0'))],
      ['an empty contract address', (r) => (r.contract_address = '')],
      ['a \\u escape', (r) => (r.access_list_json = '[]\u00e9')],
    ];
    const refused: string[] = [];
    for (const [name, change] of cases) {
      const wire = [0, 1, 2].map(contractTransaction);
      change(wire[1]!);
      let records: TransactionRecord[];
      try {
        records = mark(page(wire, (e) => JSON.stringify(e).replace('[]\u00e9', '[]\\u00e9')));
      } catch {
        refused.push(name); // the normaliser refused it outright: nothing to stage either way
        continue;
      }
      expect(
        records.map((r) => wireSourceOf(r)?.page),
        name,
      ).toEqual([undefined, undefined, undefined]);
    }
    expect(refused).toEqual([]);
    // Not ASCII: character and byte offsets differ.
    const wide = [0, 1].map(contractTransaction);
    wide[0]!.decoded = { name: 'transfér', signature: 'transfer(address,uint256)', inputs: {} };
    expect(mark(page(wide)).map((r) => wireSourceOf(r)?.page)).toEqual([undefined, undefined]);
    // Members after `data` with more `]` than the few it looks behind.
    const agg = page([0, 1].map(contractTransaction), (e) => JSON.stringify({ ...e, aggregations: [{ n: [[[[1]]]] }] }));
    expect(mark(agg).map((r) => wireSourceOf(r)?.page)).toEqual([undefined, undefined]);
  });

  it('marks the records the client returns, compressed or not', async () => {
    const wire = [0, 1, 2].map(contractTransaction);
    const body = JSON.stringify({ meta: wireMeta({ total_items: 3 }), data: wire, aggregations: null });
    for (const gzip of [false, true]) {
      const { client } = await fakeServerAndClient((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
        res.end(gzip ? gzipSync(body) : body);
      }, closing);
      const got = await client.walletTransactions(WALLET, { chainIds: [1] });
      expect(
        got.data.map((r) => wireSourceOf(r)?.index),
        `gzip ${gzip}`,
      ).toEqual([0, 1, 2]);
      expect(membersOf(got.data[0]!)).toEqual(wire);
    }
  });
});
