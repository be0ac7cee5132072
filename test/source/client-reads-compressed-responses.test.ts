import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import * as zlib from 'node:zlib';
import { ACCEPT_ENCODING } from '../../src/source/content-encoding.js';
import { HttpStatusError, ResponseShapeError, RetriesExhaustedError, UnsupportedContentEncodingError } from '../../src/source/errors.js';
import { WALLET, fakeServerAndClient, sendJson, wireMeta, wireTransaction, type Handler } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const closing = closeAfterEach();

const page = () => ({ meta: wireMeta(), data: [wireTransaction(0), wireTransaction(1), wireTransaction(2)] });
const pageText = () => JSON.stringify(page());

const hasZstd = typeof (zlib as unknown as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';
const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  'x-gzip': (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  br: (b) => zlib.brotliCompressSync(b),
  ...(hasZstd ? { zstd: (b: Buffer) => (zlib as unknown as { zstdCompressSync: (x: Buffer) => Buffer }).zstdCompressSync(b) } : {}),
};

function sendEncoded(res: ServerResponse, status: number, body: Buffer, encoding: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': body.length });
  res.end(body);
}

/** Applies the codings of a Content-Encoding value in order (first listed, first applied). */
function encode(text: string, encoding: string): Buffer {
  let out: Buffer = Buffer.from(text);
  for (const c of encoding.split(',').map((s) => s.trim())) out = ENCODERS[c]!(out);
  return out;
}

const setup = (handler: Handler) => fakeServerAndClient(handler, closing);

async function caught(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: Error) => e,
  );
}

describe('the client asks for compressed responses', () => {
  it('sends Accept-Encoding with br and gzip, and zstd exactly where the runtime decodes it', async () => {
    const { server, client } = await setup((_q, res) => sendJson(res, 200, page()));
    await client.walletTransactions(WALLET, { chainIds: [1] });
    const accepted = String(server.requests[0]!.headers['accept-encoding'])
      .split(',')
      .map((s) => s.trim());
    expect(accepted).toContain('br');
    expect(accepted).toContain('gzip');
    expect(accepted.includes('zstd')).toBe(hasZstd);
    expect(accepted.join(', ')).toBe(ACCEPT_ENCODING);
  });
});

describe('the client reads whatever Content-Encoding comes back', () => {
  for (const encoding of Object.keys(ENCODERS)) {
    it(`decodes a ${encoding} body to the same page, counting the bytes on the wire`, async () => {
      let wire = 0;
      const { server, client } = await setup((_q, res) => {
        const body = encode(pageText(), encoding);
        wire = body.length;
        sendEncoded(res, 200, body, encoding);
      });
      const got = await client.walletTransactions(WALLET, { chainIds: [1] });
      const plain = await setup((_q, res) => sendJson(res, 200, page()));
      const expected = await plain.client.walletTransactions(WALLET, { chainIds: [1] });
      expect(got).toEqual(expected);
      expect(got.data).toHaveLength(3);
      expect(server.requests).toHaveLength(1);
      expect(client.stats.bytesReceived).toBe(wire);
      expect(wire).toBeLessThan(Buffer.byteLength(pageText()));
    });
  }

  it('decodes an encoding it did not ask for (deflate) and stacked codings (gzip, br)', async () => {
    expect(ACCEPT_ENCODING).not.toContain('deflate');
    for (const encoding of ['deflate', 'gzip, br', 'identity']) {
      const { server, client } = await setup((_q, res) =>
        sendEncoded(res, 200, encoding === 'identity' ? Buffer.from(pageText()) : encode(pageText(), encoding), encoding),
      );
      const got = await client.walletTransactions(WALLET, { chainIds: [1] });
      expect(got.data.map((t) => t.hash)).toEqual(page().data.map((t) => t.hash));
      expect(server.requests).toHaveLength(1);
    }
  });

  it('reads the message of a compressed error body', async () => {
    const { client } = await setup((_q, res) =>
      sendEncoded(res, 400, zlib.gzipSync(JSON.stringify({ error: 'filter_block_number_gte is not a number' })), 'gzip'),
    );
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).shortMessage).toContain('filter_block_number_gte is not a number');
  });

  it('refuses an encoding it cannot decode with a clear error, without retrying', async () => {
    const { server, client } = await setup((_q, res) => sendEncoded(res, 200, Buffer.from(pageText()), 'lzma'));
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(UnsupportedContentEncodingError);
    expect((err as UnsupportedContentEncodingError).encoding).toBe('lzma');
    expect(err.message).toContain('Content-Encoding: lzma');
    expect(err.message).toContain('gzip');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a corrupt compressed body as cut short, then reads the good one', async () => {
    const good = zlib.gzipSync(pageText());
    const corrupt = [
      good.subarray(0, Math.floor(good.length / 2)), // a gzip stream cut in the middle
      Buffer.concat([good.subarray(0, 10), Buffer.alloc(good.length - 10, 0xff)]), // garbage after the header
    ];
    const { server, client } = await setup((_q, res, _b, n) => sendEncoded(res, 200, n <= corrupt.length ? corrupt[n - 1]! : good, 'gzip'));
    const got = await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(got.data).toHaveLength(3);
    expect(server.requests).toHaveLength(3);
    expect(client.stats.retries).toBe(2);
  });

  it('gives up on a body that never decodes, naming it cut short', async () => {
    const good = zlib.brotliCompressSync(pageText());
    const { server, client } = await setup((_q, res) => sendEncoded(res, 200, good.subarray(0, good.length - 8), 'br'));
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    const last = (err as RetriesExhaustedError).lastCause;
    expect(last).toBeInstanceOf(ResponseShapeError);
    expect((last as ResponseShapeError).problem).toBe('truncated');
    expect(last.message).toContain('br');
    expect(server.requests).toHaveLength(3);
  });
});
