export { loadAbiFile, AbiFileError } from './abi-file.js';
export {
  DECODE_STATUS_COLUMN,
  TRANSACTION_DECODE_COLUMNS,
  eventArgColumns,
  eventDecodeColumns,
  functionArgColumns,
  argColumnNames,
  snakeCase,
} from './columns.js';
export { effectiveEvent } from './effective-event.js';
export { createEventDecoder, type DecodeResult, type EventDecoder, type EventDecoderOptions } from './event-decoder.js';
export { normaliseValue, DecodeValueError, type JsonValue } from './decoded-values.js';
export { parseEventSignature, InvalidSignatureError, type ParsedEventSignature } from '../abi/event-signature.js';
export { createTransactionDecoder, type TransactionDecoder, type TransactionDecoderOptions } from './transaction-decoder.js';
