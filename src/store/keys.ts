import { InvalidKeyError } from './errors.js';

/** S3's limit on a key's UTF-8 length; the same for local keys so a destination can move. */
export const MAX_KEY_BYTES = 1024;

/** Folder at the root of a LocalStore that holds its temp and lock files (never listed). */
export const LOCAL_INTERNAL_DIR = '.insight-export-tmp';

/**
 * Checks an object key: relative, forward slashes, no empty / "." / ".." segments, no backslash or
 * control characters, at most 1024 UTF-8 bytes. Returns the key unchanged.
 */
export function validateKey(key: string): string {
  const problem = keyProblem(key, false);
  if (problem) throw new InvalidKeyError(key, problem);
  return key;
}

/**
 * Checks a list prefix: "" (everything), or like a key whose last segment may be partial or empty
 * ("a/b/" lists a folder, "a/b/part-" every key in a/b starting with "part-").
 */
export function validatePrefix(prefix: string): string {
  if (prefix === '') return prefix;
  const problem = keyProblem(prefix, true);
  if (problem) throw new InvalidKeyError(prefix, problem);
  return prefix;
}

function keyProblem(key: string, isPrefix: boolean): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'empty';
  if (key.startsWith('/')) return 'absolute (starts with "/")';
  if (key.includes('\\')) return 'contains a backslash';
  // eslint-disable-next-line no-control-regex -- control characters are what this check rejects
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'contains a control character';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `longer than ${MAX_KEY_BYTES} bytes`;
  const segments = key.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const last = i === segments.length - 1;
    if (s === '..') return 'contains a ".." segment';
    if (s === '.' && !(isPrefix && last)) return 'contains a "." segment';
    if (s === '' && !(isPrefix && last)) return last ? 'ends with "/"' : 'contains an empty segment ("//")';
  }
  if (segments[0] === LOCAL_INTERNAL_DIR) return `"${LOCAL_INTERNAL_DIR}" is reserved`;
  return null;
}

/** "a/b" + "c" -> "a/b/c"; "" + "c" -> "c". The store prefix never starts or ends with "/". */
export function joinKey(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}/${key}`;
}

/** Removes leading/trailing slashes; the remaining prefix must be a valid key (or empty). */
export function normalisePrefix(prefix: string | undefined): string {
  const p = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  if (p !== '') validateKey(p);
  return p;
}

/** S3 and this project order keys by their UTF-8 bytes (not by JavaScript's UTF-16 code units). */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
