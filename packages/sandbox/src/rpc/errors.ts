import { InsightExportError } from '../../../../src/shared-with-sandbox.js';

/** The JSON-RPC node could not be reached or sent something unusable. */
export class RpcNodeError extends InsightExportError {
  override name = 'RpcNodeError';
}
