/**
 * What an error body says: the service's own message (JSON), a short plain text as it is, or a
 * summary of anything else (a proxy's HTML page is not a message); and a 2xx list answer that is an
 * error body rather than a page.
 */
import { NotAPageError } from './errors.js';
import { isAggregateQuery, type ListQuery } from './query.js';
/** The message of an error body: `{"error": "..."}`, `{"error": {message}}` or the older `{code, message, support_id}`. */
export function errorMessageOfJson(o: Record<string, unknown>): { message: string | undefined; supportId: string | undefined } | undefined {
  const supportId = typeof o.support_id === 'string' ? o.support_id : undefined;
  if (typeof o.error === 'string') return { message: o.error, supportId };
  if (o.error && typeof o.error === 'object' && typeof (o.error as Record<string, unknown>).message === 'string') {
    return { message: (o.error as Record<string, string>).message, supportId };
  }
  if (typeof o.message === 'string') {
    return { message: o.code !== undefined ? `${o.message} (code ${String(o.code)})` : o.message, supportId };
  }
  return undefined;
}

/**
 * An error body's message: the service's own (JSON), a short plain text as it is, else a summary
 * (content type, title or first line, length): a proxy's HTML error page is not a message.
 */
export function errorMessageOf(
  text: string,
  contentType?: string | string[],
): { message: string | undefined; supportId: string | undefined } {
  const trimmed = text.trim();
  if (trimmed === '') return { message: undefined, supportId: undefined };
  try {
    const json = JSON.parse(trimmed) as unknown;
    if (json && typeof json === 'object') {
      const found = errorMessageOfJson(json as Record<string, unknown>);
      if (found) return found;
    }
  } catch {
    // not JSON: fall through to the text
  }
  return { message: summariseBody(trimmed, contentType), supportId: undefined };
}

/** Longest error text used as it is; longer ones, and markup, are summarised. */
const SHORT_ERROR_TEXT = 120;

/** A non-JSON error body in a few words: `text/html body of 1234 bytes: "503 Service Temporarily Unavailable"`. */
export function summariseBody(text: string, contentType?: string | string[]): string {
  const markup = /^<(!doctype|html|\?xml|[a-z])/i.test(text);
  if (!markup && !text.includes('\n') && text.length <= SHORT_ERROR_TEXT) return text;
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]?.trim() || (markup ? 'markup' : 'text');
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1] ?? /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1];
  const firstLine = (markup ? text.replace(/<[^>]*>/g, ' ') : text)
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find((l) => l !== '');
  const gist = (title?.replace(/\s+/g, ' ').trim() || firstLine || '').slice(0, 80);
  return `${type} body of ${Buffer.byteLength(text)} bytes${gist ? `: "${gist}"` : ''}`;
}

/**
 * A list answer must be a page: not an error body (whatever its status), and with `data` an
 * array when records were asked for (the indexer always sends one, `[]` when empty).
 */
export function listPageCheck(q: ListQuery): (json: unknown, url: string) => void {
  const aggregated = isAggregateQuery(q);
  return (json, url) => {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return; // the normaliser names the shape
    const o = json as Record<string, unknown>;
    const rows = aggregated ? (o.aggregations ?? o.data) : o.data;
    if (Array.isArray(rows)) return;
    if (o.error !== undefined && o.error !== null)
      throw new NotAPageError(url, 'an error body', errorMessageOfJson(o)?.message ?? JSON.stringify(o.error).slice(0, 300));
    if (o.meta === undefined && typeof o.message === 'string')
      throw new NotAPageError(url, 'an error body', errorMessageOfJson(o)?.message);
    if (!aggregated) throw new NotAPageError(url, `no rows (data is ${o.data === null ? 'null' : 'missing'})`, undefined);
  };
}
