import { readFileSync } from 'node:fs';
import { Agent } from 'undici';

/**
 * Replays the requests a run made (a JSON file listing path + query strings, in order) against
 * `origin` with `concurrency` slots over one undici pool, and hands each whole response body to
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
  const headers = { accept: 'application/json', 'user-agent': 'insight-export-bench' };
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
      const pageRows = await onBody(Buffer.concat(chunks, received));
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
