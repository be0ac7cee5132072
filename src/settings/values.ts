/**
 * Parsers for the small value languages of job and config files: durations, byte sizes,
 * addresses, ENS names, points in time, event signatures, destinations.
 * Each returns a value or a `ValueProblem` (a predicate about the value plus a hint), so the
 * caller decides how to report it (zod issue with file:line, CLI flag, environment variable).
 */
import { checksumMismatch } from '../source/query.js';
import { canonicaliseTypeAliases, InvalidSignatureError, parseEventSignature, type ParsedEventSignature } from '../abi/event-signature.js';
import { ens_normalize } from '@adraffy/ens-normalize';
import type { Hex } from '../source/records.js';
import { InvalidDestinationError } from '../store/errors.js';
import { parseStoreDestination } from '../store/open-store.js';

export interface ValueProblem {
  /** Reads after the value: `"0xzz" is not an address (0x + 40 hex digits)`. */
  problem: string;
  hint?: string | undefined;
  /** The value may hold a credential: report the problem without echoing the value. */
  secret?: boolean | undefined;
}

export type Parsed<T> = { ok: true; value: T } | ({ ok: false } & ValueProblem);

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (problem: string, hint?: string): Parsed<never> => ({ ok: false, problem, hint });
/** A problem with a value that may hold a credential (never echoed in messages). */
const badSecret = (problem: string, hint?: string): Parsed<never> => ({ ok: false, problem, hint, secret: true });

// ---------------------------------------------------------------- durations

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const DURATION_RE = /^(?:\d+(?:ms|s|m|h|d|w))+$/;
export const DURATION_PATTERN = '^(?:\\d+(?:ms|s|m|h|d|w))+$';
export const DURATION_ERROR = 'is not a duration (a number and a unit: "30s", "10m", "2h", "1d", "1h30m"; units ms s m h d w)';

/** "10m", "2h", "1d", "1h30m", "500ms" -> milliseconds. A bare number is refused: its unit would be a guess. */
export function parseDurationMs(input: unknown): Parsed<number> {
  if (typeof input === 'number' || typeof input === 'bigint') {
    return bad('is a number without a unit', `write a duration with its unit, e.g. "${String(input)}s" or "10m" (units: ms s m h d w)`);
  }
  if (typeof input !== 'string') return bad('is not a duration');
  const text = input.trim();
  if (!DURATION_RE.test(text)) {
    return bad('is not a duration', 'write a number and a unit, e.g. "30s", "10m", "2h", "1d", "1h30m" (units: ms s m h d w)');
  }
  let total = 0;
  for (const m of text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
  if (!Number.isSafeInteger(total)) return bad('is too long a duration');
  return ok(total);
}

/** A duration in whole seconds (range chunk, safety lag). */
export function parseDurationSeconds(input: unknown): Parsed<number> {
  const ms = parseDurationMs(input);
  if (!ms.ok) return ms;
  if (ms.value % 1000 !== 0) return bad('is not a whole number of seconds', 'block timestamps have a resolution of one second');
  return ok(ms.value / 1000);
}

export function formatDuration(seconds: number): string {
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  if (seconds === 0) return '0s';
  let rest = seconds;
  let out = '';
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}

// ---------------------------------------------------------------- byte sizes

/** KB/MB/GB are decimal (1000^n), KiB/MiB/GiB binary (1024^n): the SI and IEC meanings. */
const BYTE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};
const BYTES_RE = /^(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?$/i;
export const BYTE_SIZE_PATTERN = '^\\d+(\\.\\d+)?\\s*([kKmMgGtT][iI]?[bB]|[bB])?$';
export const BYTE_SIZE_ERROR = 'is not a byte size (e.g. "512MB", "1GB", "256MiB"; KB/MB/GB = 1000^n, KiB/MiB/GiB = 1024^n)';

/** "512MB" (decimal), "1GiB" (binary), 1048576 (bytes) -> bytes. */
export function parseByteSize(input: unknown): Parsed<number> {
  if (typeof input === 'number') {
    if (Number.isSafeInteger(input) && input > 0) return ok(input);
    return bad('is not a positive whole number of bytes');
  }
  if (typeof input !== 'string') return bad('is not a byte size');
  const m = BYTES_RE.exec(input.trim());
  if (!m)
    return bad('is not a byte size', 'write a number and a unit, e.g. "512MB", "1GB", "256MiB" (KB/MB/GB = 1000^n, KiB/MiB/GiB = 1024^n)');
  const bytes = Math.round(Number(m[1]) * BYTE_UNITS[(m[2] ?? 'b').toLowerCase()]!);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) return bad('is not a positive byte size');
  return ok(bytes);
}

// ---------------------------------------------------------------- addresses and names

export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

export function isAddress(s: string): boolean {
  return ADDRESS_RE.test(s);
}

export function parseAddress(input: unknown): Parsed<Hex> {
  if (typeof input !== 'string') return bad('is not an address (0x + 40 hex digits)', 'quote it: "0x..."');
  const s = input.trim();
  if (!ADDRESS_RE.test(s)) {
    const hint = /^0x[0-9a-fA-F]*$/.test(s) ? `it has ${s.length - 2} hex digits` : undefined;
    return bad('is not an address (0x + 40 hex digits)', hint);
  }
  // Mixed case is an EIP-55 checksum: one that does not match is a typo somewhere in the address.
  const checksummed = checksumMismatch(s);
  if (checksummed) {
    return bad(
      'has a wrong EIP-55 checksum (its mixed case does not match)',
      `check every digit; ${checksummed} is the checksummed form of what is written (lowercase skips the check)`,
    );
  }
  return ok(s.toLowerCase() as Hex);
}

/** Labels of lowercase ASCII letters and digits are their own ENSIP-15 normal form. */
const PLAIN_NAME = /^[a-z0-9]+(?:\.[a-z0-9]+)+$/;

/**
 * ENSIP-15 normalisation (the library viem uses). Its first call builds the Unicode tables, which
 * costs most of a cron run's start-up: a plain name skips it.
 */
function normalizeEnsName(name: string): string {
  return PLAIN_NAME.test(name) ? name : ens_normalize(name);
}

/** An address, or an ENS-style name ("alice.eth") the service resolves. Names are ENS-normalised. */
export function parseAddressOrName(input: unknown): Parsed<{ value: string; isName: boolean }> {
  if (typeof input !== 'string') return bad('is not an address or a name', 'quote it: "0x..." or "alice.eth"');
  const s = input.trim();
  if (s.startsWith('0x') || s.startsWith('0X')) {
    const a = parseAddress(s);
    return a.ok ? ok({ value: a.value, isName: false }) : a;
  }
  if (!/^[^.\s]+(\.[^.\s]+)+$/.test(s)) {
    return bad('is not an address (0x + 40 hex digits) or a name like "alice.eth"');
  }
  try {
    return ok({ value: normalizeEnsName(s), isName: true });
  } catch (err) {
    return bad(`is not a valid name (${(err as Error).message.split('\n')[0]?.replace(/\u200e/g, '')})`);
  }
}

export function parseHash32(input: unknown): Parsed<Hex> {
  if (typeof input !== 'string' || !HASH_RE.test(input.trim())) return bad('is not a 32-byte hash (0x + 64 hex digits)');
  return ok(input.trim().toLowerCase() as Hex);
}

// ---------------------------------------------------------------- points in time

/** Unix seconds above this look like milliseconds (year 5138). */
const MAX_UNIX_SECONDS = 99_999_999_999;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?$/i;

export function isDateLike(s: string): boolean {
  return DATE_RE.test(s) || DATETIME_RE.test(s);
}

/** "2024-01-01" (UTC midnight), "2024-01-01T12:00:00Z", "2024-01-01T12:00+02:00" -> unix seconds. */
export function parseTimePoint(input: unknown): Parsed<number> {
  if (typeof input === 'number') {
    if (!Number.isSafeInteger(input) || input < 0) return bad('is not a unix time in seconds (a whole number >= 0)');
    if (input > MAX_UNIX_SECONDS) return bad('is too large for unix seconds', 'it looks like milliseconds: divide by 1000');
    return ok(input);
  }
  if (typeof input !== 'string') return bad('is not a date or time');
  const s = input.trim();
  let m = DATE_RE.exec(s);
  if (m) {
    const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (new Date(t).toISOString().slice(0, 10) !== s) return bad('is not a real calendar date');
    return ok(t / 1000);
  }
  m = DATETIME_RE.exec(s);
  if (m) {
    if (!m[7]) return bad('has no time zone', 'add "Z" for UTC (or an offset like +02:00): times are never read in the local zone');
    const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${m[7].toUpperCase() === 'Z' ? 'Z' : m[7].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')}`;
    const t = Date.parse(iso);
    const dayCheck = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).toISOString().slice(0, 10);
    if (Number.isNaN(t) || dayCheck !== `${m[1]}-${m[2]}-${m[3]}` || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) {
      return bad('is not a real date and time');
    }
    return ok(t / 1000);
  }
  return bad('is not a date or time', 'write "2024-01-01" (UTC midnight) or "2024-01-01T00:00:00Z"');
}

// ---------------------------------------------------------------- event signatures

/** An event of a job file: the parsed signature, and as `signature` the form the job's units send (its `human` form). */
export interface EventSignature extends ParsedEventSignature {
  signature: string;
}

/** A job file's event signature; Solidity's aliases (uint, int, byte) are read as what they mean. */
export function parseJobEventSignature(input: unknown): Parsed<EventSignature> {
  if (typeof input !== 'string') return bad('is not an event signature');
  try {
    const p = parseEventSignature(canonicaliseTypeAliases(input));
    return ok({ ...p, signature: p.human });
  } catch (err) {
    if (err instanceof InvalidSignatureError) return bad(`is not a valid event signature: ${err.problem}`, err.hint);
    throw err;
  }
}

// ---------------------------------------------------------------- destinations

export type Destination =
  | { kind: 'local'; /** absolute path */ path: string; url: string }
  | { kind: 's3'; bucket: string; /** no leading or trailing "/"; "" for the bucket root */ prefix: string; url: string };

/** In a job file's local destination, the job file's folder: `{job_dir}/out`. */
export const JOB_DIR = '{job_dir}';

/**
 * `s3://bucket/prefix` or a local directory (relative paths are taken from `cwd`), by the store's
 * rules; `{job_dir}/...` is taken from `jobDir`, the folder of the job file that sets it.
 */
export function parseDestination(input: unknown, cwd: string, jobDir?: string): Parsed<Destination> {
  if (typeof input !== 'string' || input.trim() === '')
    return bad('is not a destination', 'write "s3://bucket/prefix" or a local directory like "./out"');
  const fromJobDir = input.trim().startsWith(JOB_DIR);
  if (input.includes(JOB_DIR) && !(fromJobDir && /^[/\\]|^$/.test(input.trim().slice(JOB_DIR.length))))
    return bad(`has ${JOB_DIR} elsewhere than at its start`, `write "${JOB_DIR}/out": a folder under the job file's folder`);
  if (fromJobDir && jobDir === undefined)
    return bad(
      `uses ${JOB_DIR}, which only a job file's output.destination takes`,
      'write the path, or set the destination in the job file',
    );
  try {
    const d = parseStoreDestination(fromJobDir ? `${jobDir}${input.trim().slice(JOB_DIR.length)}` : input, cwd);
    return ok(d.kind === 's3' ? { ...d, url: `s3://${d.bucket}${d.prefix ? `/${d.prefix}` : ''}` } : { ...d, url: d.path });
  } catch (err) {
    if (!(err instanceof InvalidDestinationError)) throw err;
    if (err.mayHoldSecret) return badSecret(err.problem, 'S3 credentials come from the AWS default chain (environment, profile, role)');
    return bad(err.problem, err.fix ?? 'write "s3://bucket/prefix" or a local directory like "./out"');
  }
}

// ---------------------------------------------------------------- base URLs

export const SANDBOX = 'sandbox';

/** An http(s) URL without credentials, or the literal "sandbox". Trailing "/" removed. */
export function parseBaseUrl(input: unknown, allowSandbox: boolean): Parsed<string> {
  if (typeof input !== 'string') return bad('is not a URL');
  const s = input.trim();
  if (allowSandbox && s === SANDBOX) return ok(SANDBOX);
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return bad(`is not a URL${allowSandbox ? ' (nor "sandbox")' : ''}`, 'write e.g. "http://127.0.0.1:8787/insights/v1"');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad('is not an http(s) URL');
  if (url.username || url.password || /secret|client[-_]?id|key=/i.test(url.search)) {
    return badSecret('must not contain credentials', 'set INSIGHT_CLIENT_ID or INSIGHT_SECRET_KEY in the environment instead');
  }
  return ok(s.replace(/\/+$/, ''));
}
