/**
 * The write conditions of PutOptions (`ifNoneMatch: '*'`, `ifMatch: <etag>`) as every store judges
 * them against the object it holds: S3 checks them on the server (and this store before a multipart
 * upload, whose condition radosgw ignores), a local folder under its per-key lock.
 */
import { PreconditionFailedError } from './errors.js';
import type { PutOptions } from './store.js';

/** ETags are compared without quotes ("abc" and abc are the same tag), a weak tag's W/ dropped. */
export function normaliseEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

/** Whether a put carries a condition. */
export function isConditional(opts: PutOptions): boolean {
  return opts.ifNoneMatch !== undefined || opts.ifMatch !== undefined;
}

/** Throws PreconditionFailedError unless the object as it stands (its ETag; null: absent) meets the put's conditions. */
export function checkConditions(location: string, key: string, current: string | null, opts: PutOptions): void {
  if (opts.ifNoneMatch === '*' && current !== null) throw new PreconditionFailedError(location, key, opts);
  if (opts.ifMatch !== undefined && (current === null || current !== normaliseEtag(opts.ifMatch))) {
    throw new PreconditionFailedError(location, key, opts);
  }
}
