import { InsightExportError, UserInputError, type ErrorParameters } from '../errors.js';

/** A format/compression/engine combination the writers do not support (bad job file or flag). */
export class UnsupportedOutputError extends UserInputError {
  override name = 'UnsupportedOutputError';
}

/**
 * A row value that does not fit its declared column type (a dataset mapper or decoder bug, or a
 * source value outside the column model). Raised before anything of that page is written.
 */
export class InvalidRowValueError extends InsightExportError {
  override name = 'InvalidRowValueError';
  readonly column: string;
  constructor(column: string, shortMessage: string, params: ErrorParameters) {
    super(shortMessage, params);
    this.column = column;
  }
}

/** write()/finish() called on a writer that is finished, aborted or failed. */
export class FileWriterStateError extends InsightExportError {
  override name = 'FileWriterStateError';
}

/** The local file or the Parquet encoder failed (disk full, DuckDB error ...). */
export class FileWriteError extends InsightExportError {
  override name = 'FileWriteError';
}
