import { hash3, unit } from './prng.js';

/** The message of an HTTP 200 error body (the exporter must report it as the service's own). */
export const OK_ERROR_MESSAGE = 'query failed: memory limit exceeded (sandbox: an error body on HTTP 200)';

/** Turns the answer of a list request into what a misbehaving server sends with HTTP 200. */
export type OkMisbehaviour = (answer: () => unknown) => unknown;

/**
 * Misbehaving servers of the interface seen in the field: HTTP 200 with an `{"error"}` body, or
 * (where rows were asked for) with `data: null` or no `data` at all. Drawn per request from its key
 * at the given rates; null: answer as usual.
 */
export function okMisbehaviour(
  requestKey: number,
  rowsAsked: boolean,
  rates: { okErrorBody?: number | undefined; okWithoutData?: number | undefined },
): OkMisbehaviour | null {
  if (unit(hash3(requestKey, 0x0e, 1)) < (rates.okErrorBody ?? 0)) return () => ({ error: OK_ERROR_MESSAGE });
  if (!rowsAsked || unit(hash3(requestKey, 0x0d, 2)) >= (rates.okWithoutData ?? 0)) return null;
  return (answer) => {
    const { data: _data, ...rest } = answer() as Record<string, unknown>;
    return hash3(requestKey, 0x0d, 3) & 1 ? { ...rest, data: null } : rest;
  };
}
