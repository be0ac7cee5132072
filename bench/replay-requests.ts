import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { ACCEPT_ENCODING, contentCodings, decodeBody } from '../src/source/content-encoding.js';

/**
 * Replays the requests a run made (a JSON file listing path + query strings, in order) against
 * `origin` with `concurrency` slots over one undici pool, asking for compressed answers as the
 * exporter's client does (and as fetch() would), and hands each whole decoded response body to
 * `onBody`, which returns the page's row count. A slot takes its next request once onBody resolved.
 */
export async function replayRequests(
  origin: string,
  pathsFile: string,
  concurrency: number,
  onBody: (body: Buffer) => number | Promise<number>,
): Promise<{ rows: number; requests: number }> {
  const paths = JSON.parse(readFileSync(pathsFile, 'utf8')) as string[];
  const agent = new Agent({ connections: concurrency });
  const headers = { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING, 'user-agent': 'insight-export-bench' };
  let next = 0;
  let rows = 0;
  const slot = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const res = await agent.request({ origin, path, method: 'GET', headers });
      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        received += (chunk as Buffer).length;
      }
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} for ${origin}${path}`);
      const body = await decodeBody(Buffer.concat(chunks, received), contentCodings(res.headers['content-encoding']));
      const pageRows = await onBody(body);
      rows += pageRows;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, slot));
  } finally {
    await agent.close();
  }
  return { rows, requests: paths.length };
}
