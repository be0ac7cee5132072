/**
 * The streams of a run that exported no row at all (the report's `empty_units`), said in one line
 * however many there are: a 500-wallet job once printed a line for each of its 996 empty streams.
 * The line names the first few and the count; the run report lists them all.
 */

/** How many empty streams the line names before it counts the rest. */
const NAMED = 3;

/** One line for the summary and the log: "no rows at all for ..." and what to check. */
export function emptyStreamsLine(streams: readonly string[]): string {
  if (streams.length === 1) return `no rows at all for ${streams[0]}: check its address, signature, filters and range`;
  const named = streams.slice(0, NAMED).join(', ');
  const more = streams.length > NAMED ? ` and ${streams.length - NAMED} more` : '';
  return (
    `no rows at all for ${streams.length} streams (${named}${more}; the run report's empty_units lists them all): ` +
    'check their addresses, signatures, filters and range'
  );
}
