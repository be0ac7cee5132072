/**
 * What the product shares with the sandbox (packages/sandbox, `@insight-export/sandbox`): the one
 * module of src/ the sandbox imports (test/ops/every-folder-imports-only-from-its-own-floor-or-below.test.ts
 * holds it to that). The read interface's record types and limits, as the client reads them (the
 * sandbox answers with the same shapes, so a change to one is a type error in the other); the
 * event-signature parser and the calldata decoder (one of each); the error base and exit codes
 * (the CLI's `sandbox` command fails like any other); the logger; UTC dates.
 */
import type { Abi } from 'viem';

export type * from './source/records.js';
export type { BLOCK_FIELDS, EVENT_QUERY_FIELDS, TRANSACTION_QUERY_FIELDS } from './columns/record-fields.js';
export type { Column, ColumnType } from './columns/columns.js';
export { isoDate, isoTime } from './columns/columns.js';
export { MAX_CHAIN_IDS, MAX_LIMIT, MAX_PAGE, MAX_PAGE_AGGREGATED } from './source/query.js';
export { zlibChunkSize } from './source/content-encoding.js';
export { canonicalSignature } from './abi/abi-types.js';
export { compileParametersDecoder, type ParametersDecoder } from './decode/calldata.js';
/** An ABI file, read as the product reads one (loaded on first use: only `sandbox --rpc` reads ABI files). */
export async function loadAbiFile(file: string): Promise<Abi> {
  return (await import('./decode/abi-file.js')).loadAbiFile(file);
}
export { InsightExportError, UserInputError, errorMessage, walk } from './errors.js';
export { createLogger, type Logger } from './log.js';
