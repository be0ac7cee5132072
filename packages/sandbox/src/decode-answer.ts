import type { DecodeResponse, DecodedLogResult, DecodedTransactionResult } from '../../../src/shared-with-sandbox.js';
import { badRequest } from './errors.js';

/** What a contract's ABI makes of a call's input or a log; null when it does not know it. */
export interface ContractDecoder {
  call(data: string): { name: string; args: DecodedTransactionResult['args'] } | null;
  log(topics: string[], data: string): { name: string; args: DecodedLogResult['args'] } | null;
}

/**
 * The answer of POST decode/<contract> for a contract whose ABI is known: checks the body
 * (`{ transactions?: [{ data }], logs?: [{ topics, data }] }`, 400 on anything else) and decodes
 * each entry in order (hex bytes; null name and no args where the ABI does not match).
 */
export function decodeAnswer(body: unknown, decoder: ContractDecoder): DecodeResponse {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('decode body must be a JSON object');
  const b = body as { transactions?: unknown; logs?: unknown };
  const txs = b.transactions ?? [];
  const logs = b.logs ?? [];
  if (!Array.isArray(txs) || !Array.isArray(logs)) throw badRequest('decode body: transactions and logs must be arrays');
  const out: DecodeResponse = { data: { transactions: [], logs: [] } };
  txs.forEach((t: unknown, i) => {
    const data = (t as { data?: unknown } | null)?.data;
    if (typeof data !== 'string') throw badRequest(`decode body: transactions[${i}].data must be a hex string`);
    const d = decoder.call(data);
    out.data.transactions.push({ data, function_name: d?.name ?? null, args: d?.args ?? [] });
  });
  logs.forEach((l: unknown, i) => {
    const log = l as { topics?: unknown; data?: unknown } | null;
    if (!Array.isArray(log?.topics) || !log.topics.every((t) => typeof t === 'string') || typeof log.data !== 'string') {
      throw badRequest(`decode body: logs[${i}] needs topics (array of hex strings) and data (hex string)`);
    }
    const topics = (log.topics as string[]).map((t) => t.toLowerCase());
    const d = decoder.log(topics, log.data);
    out.data.logs.push({ topics: log.topics as string[], data: log.data, event_name: d?.name ?? null, args: d?.args ?? [] });
  });
  return out;
}
