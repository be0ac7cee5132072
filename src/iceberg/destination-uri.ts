import { pathToFileURL } from 'node:url';
import type { ObjectStore } from '../store/store.js';

/** The destination as the table metadata addresses it: S3 as is, a local directory as a file URI. */
export function destinationUri(store: ObjectStore): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(store.location) ? store.location.replace(/\/+$/, '') : pathToFileURL(store.location).href;
}

/** A key of the destination as the table metadata addresses it. */
export function keyUri(rootUri: string, key: string): string {
  return `${rootUri}/${encodeURI(key)}`;
}
