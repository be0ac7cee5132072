import { readFile } from 'node:fs/promises';
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

const FILE_SHAPE = 'a JSON object {"transactions": [{"data"}], "logs": [{"topics", "data"}]} or a JSON array of logs';

/**
 * Reads a decode request body from a file: `{transactions?: [...], logs?: [...]}` or a bare array
 * of logs. Entries may carry other fields (whole event or transaction records): only `topics` and
 * `data` (transactions: `data`, or `input` as RPC nodes name it) are sent. Problems name the file
 * and the JSON path.
 */
export async function readDecodeFile(file: string): Promise<DecodeRequestBody> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DecodeFileError(`Cannot read the decode file ${file}`, {
      details: code === 'ENOENT' ? 'no such file' : String(code ?? err),
      hint: `--file takes ${FILE_SHAPE}.`,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DecodeFileError(`The decode file ${file} is not valid JSON`, {
      details: err instanceof Error ? err.message : String(err),
      hint: `--file takes ${FILE_SHAPE}.`,
    });
  }
  const bare = Array.isArray(json);
  let body: DecodeRequestBody;
  if (bare) {
    body = { logs: (json as unknown[]).map(pickLog) };
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
    const path = err.parameter
      .replace(/^body\.logs/, bare ? '$' : '$.logs')
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

function pickLog(entry: unknown): { topics: string[]; data: string } {
  const e = (entry ?? {}) as { topics?: unknown; data?: unknown };
  return { topics: e.topics as string[], data: e.data as string };
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
      .option('file', { alias: 'f', type: 'string', demandOption: true, describe: `JSON file: ${FILE_SHAPE}` })
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
  const parts: string[] = [];
  const { logs, transactions } = res.data;
  if (logs.length > 0) {
    parts.push(
      `logs (${logs.length}, ${logs.filter((l) => l.event_name !== null).length} decoded)\n${renderTable(
        logs.map((l, i) => ({ i, l })),
        [
          { header: '#', value: (r: { i: number; l: DecodedLogResult }) => r.i, align: 'right' },
          { header: 'event', value: (r) => r.l.event_name ?? '(not decoded)' },
          { header: 'args', value: (r) => r.l.args.map(argText).join(', ') },
        ],
        { maxWidth },
      )}`,
    );
  }
  if (transactions.length > 0) {
    parts.push(
      `transactions (${transactions.length}, ${transactions.filter((t) => t.function_name !== null).length} decoded)\n${renderTable(
        transactions.map((t, i) => ({ i, t })),
        [
          { header: '#', value: (r: { i: number; t: DecodedTransactionResult }) => r.i, align: 'right' },
          { header: 'function', value: (r) => r.t.function_name ?? '(not decoded)' },
          { header: 'args', value: (r) => r.t.args.map(argText).join(', ') },
        ],
        { maxWidth },
      )}`,
    );
  }
  return parts.length > 0 ? parts.join('\n') : 'nothing decoded\n';
}
