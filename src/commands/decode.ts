import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import type { CommandModule } from 'yargs';
import { UserInputError } from '../errors.js';
import { RequestValidationError } from '../source/errors.js';
import { validateDecodeBody } from '../source/query.js';
import type { DecodeRequestBody, DecodeResponse, DecodedLogResult, DecodedTransactionResult } from '../source/records.js';
import { chainIdsOf, printResult, rejectedInput, withClient, withSourceFlags, type SourceArgs } from './source-options.js';
import { renderTable, terminalWidth } from './table.js';

interface DecodeArgs extends SourceArgs {
  contract: string;
  file: string;
}

/** The --file of `decode` cannot be read or is not a decode body. */
export class DecodeFileError extends UserInputError {
  override name = 'DecodeFileError';
}

const FILE_SHAPE =
  'a JSON object {"transactions": [{"data"}], "logs": [{"topics", "data"}]}, a JSON array of logs, or records as exported (NDJSON, .ndjson.gz, Parquet: event rows with topic0..topic3 and data, transaction rows with data)';

/**
 * Reads a decode request body from a file: `{transactions?: [...], logs?: [...]}`, or records:
 * a JSON array, NDJSON (gzipped or not) or a Parquet file, as this tool exports them. A record
 * with `topics` or `topic0` is a log, any other a transaction. Records may carry other fields
 * (whole event or transaction rows): only `topics` (or `topic0`..`topic3`) and `data`
 * (transactions: `data`, or `input` as RPC nodes name it) are sent. Problems name the file and
 * the JSON path or record.
 */
export async function readDecodeFile(file: string): Promise<DecodeRequestBody> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DecodeFileError(`Cannot read the decode file ${file}`, {
      details: code === 'ENOENT' ? 'no such file' : String(code ?? err),
      hint: `--file takes ${FILE_SHAPE}.`,
    });
  }
  const json = bytes.subarray(0, 4).toString('latin1') === 'PAR1' ? await parquetRecords(file) : parseText(file, bytes);
  let body: DecodeRequestBody;
  /** A body path (`body.logs[3].data`) as the place in the list of records it came from (`$[7].data`, 0-based). */
  let recordOf: ((path: string) => string) | null = null;
  if (Array.isArray(json)) {
    const logs: number[] = [];
    const transactions: number[] = [];
    json.forEach((r: unknown, i) => (isLogRecord(r) ? logs : transactions).push(i));
    body = {};
    if (logs.length > 0 || transactions.length === 0) body.logs = logs.map((i) => pickLog(json[i]));
    if (transactions.length > 0) body.transactions = transactions.map((i) => pickTransaction(json[i]));
    recordOf = (path) =>
      path.replace(/^body\.(logs|transactions)\[(\d+)\]/, (_m, kind: string, n: string) => {
        const index = (kind === 'logs' ? logs : transactions)[Number(n)]!;
        return `$[${index}]`;
      });
  } else if (json !== null && typeof json === 'object' && ('logs' in json || 'transactions' in json)) {
    const o = json as { logs?: unknown; transactions?: unknown };
    body = {};
    if (o.logs !== undefined) body.logs = Array.isArray(o.logs) ? o.logs.map(pickLog) : (o.logs as never);
    if (o.transactions !== undefined) {
      body.transactions = Array.isArray(o.transactions) ? o.transactions.map(pickTransaction) : (o.transactions as never);
    }
  } else {
    throw new DecodeFileError(`The decode file ${file} has neither "logs" nor "transactions"`, {
      details: `${file} at $`,
      hint: `--file takes ${FILE_SHAPE}.`,
    });
  }
  try {
    return validateDecodeBody(body);
  } catch (err) {
    if (!(err instanceof RequestValidationError)) throw err;
    const path = recordOf
      ? recordOf(err.parameter)
      : err.parameter
          .replace(/^body\.logs/, '$.logs')
          .replace(/^body\.transactions/, '$.transactions')
          .replace(/^body$/, '$');
    throw new DecodeFileError(
      `The decode file ${file} is not a decode request: ${err.shortMessage.replace(/^Invalid request parameter [^:]+: /, '')}`,
      {
        details: `${file} at ${path}`,
        hint: `--file takes ${FILE_SHAPE}.`,
      },
    );
  }
}

/** JSON, or NDJSON (one record per line); gzip is undone first. */
function parseText(file: string, bytes: Buffer): unknown {
  const text = (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    const lines = text.split('\n');
    if (lines.filter((l) => l.trim() !== '').length < 2) {
      throw new DecodeFileError(`The decode file ${file} is not valid JSON`, {
        details: err instanceof Error ? err.message : String(err),
        hint: `--file takes ${FILE_SHAPE}.`,
      });
    }
    const records: unknown[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        records.push(JSON.parse(line));
      } catch (lineErr) {
        throw new DecodeFileError(`The decode file ${file} is neither JSON nor NDJSON`, {
          details: `${file}:${i + 1}: ${lineErr instanceof Error ? lineErr.message : String(lineErr)}`,
          hint: `--file takes ${FILE_SHAPE}.`,
        });
      }
    });
    return records;
  }
}

/** The rows of an exported Parquet file: only the columns a decode request uses. */
async function parquetRecords(file: string): Promise<Record<string, unknown>[]> {
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, compressors } = await (
    await import('../state/exported-files.js')
  ).parquetReader();
  try {
    const buffer = await asyncBufferFromFile(file);
    const metadata = await parquetMetadataAsync(buffer);
    const present = new Set(parquetSchema(metadata).children.map((c) => c.element.name));
    const columns = ['topics', 'topic0', 'topic1', 'topic2', 'topic3', 'data', 'input'].filter((c) => present.has(c));
    return (await parquetReadObjects({ file: buffer, metadata, columns, compressors })) as Record<string, unknown>[];
  } catch (err) {
    throw new DecodeFileError(`The decode file ${file} is not a readable Parquet file`, {
      details: err instanceof Error ? err.message : String(err),
      hint: `--file takes ${FILE_SHAPE}.`,
    });
  }
}

function isLogRecord(entry: unknown): boolean {
  return entry !== null && typeof entry === 'object' && ('topics' in entry || 'topic0' in entry);
}

function pickLog(entry: unknown): { topics: string[]; data: string } {
  const e = (entry ?? {}) as { topics?: unknown; data?: unknown; topic0?: unknown; topic1?: unknown; topic2?: unknown; topic3?: unknown };
  const topics = e.topics !== undefined ? e.topics : [e.topic0, e.topic1, e.topic2, e.topic3].filter((t) => t !== null && t !== undefined);
  return { topics: topics as string[], data: e.data as string };
}

function pickTransaction(entry: unknown): { data: string } {
  const e = (entry ?? {}) as { data?: unknown; input?: unknown };
  return { data: (e.data ?? e.input) as string };
}

/** Operation 4 (POST): the service decodes raw logs and transaction inputs with the contract's ABI. */
export const decodeCommand: CommandModule<object, DecodeArgs> = {
  command: 'decode <contract>',
  describe: 'Decode raw logs and transaction inputs of a contract with the ABI the service knows',
  builder: (y) =>
    withSourceFlags(y)
      .positional('contract', { type: 'string', demandOption: true, describe: 'Contract address (0x + 40 hex)' })
      .option('file', { alias: 'f', type: 'string', demandOption: true, describe: `File: ${FILE_SHAPE}` })
      .example('$0 decode 0x77f5e148a71be22cf4f3a1816626b240547b6302 --file logs.json --chain 1', 'Decode logs of a token') as never,
  handler: async (args) => {
    const chainIds = chainIdsOf(args);
    const body = await readDecodeFile(args.file);
    const contract = String(args.contract);
    const res = await withClient(args, (client) =>
      client
        .decode(contract, body, chainIds ? { chainIds } : {})
        .catch((err: unknown) =>
          rejectedInput(
            err,
            `the decode request for ${contract}`,
            'The service knows no ABI for this contract. To decode its events locally, export them with a job whose contract target names an ABI file (abi:).',
          ),
        ),
    );
    printResult(args, res.data, () => renderDecode(res, terminalWidth()));
  },
};

function argText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export function renderDecode(res: DecodeResponse, maxWidth?: number): string {
  const { logs, transactions } = res.data;
  const parts = [
    decodedSection('logs', 'event', logs, (l) => l.event_name, maxWidth),
    decodedSection('transactions', 'function', transactions, (t) => t.function_name, maxWidth),
  ].filter((p) => p !== null);
  return parts.length > 0 ? parts.join('\n') : 'nothing decoded\n';
}

/** One kind of decoded item as a titled table (numbered, its name, its arguments), or null when there is none. */
function decodedSection<T extends DecodedLogResult | DecodedTransactionResult>(
  title: string,
  nameHeader: string,
  items: readonly T[],
  nameOf: (item: T) => string | null,
  maxWidth: number | undefined,
): string | null {
  if (items.length === 0) return null;
  const decoded = items.filter((item) => nameOf(item) !== null).length;
  const table = renderTable(
    items.map((item, i) => ({ i, item })),
    [
      { header: '#', value: (r: { i: number; item: T }) => r.i, align: 'right' },
      { header: nameHeader, value: (r) => nameOf(r.item) ?? '(not decoded)' },
      { header: 'args', value: (r) => r.item.args.map(argText).join(', ') },
    ],
    { maxWidth },
  );
  return `${title} (${items.length}, ${decoded} decoded)\n${table}`;
}
