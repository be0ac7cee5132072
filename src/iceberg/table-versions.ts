/**
 * A table's metadata versions as files under `<table>/metadata/`: `v<N>.metadata.json`, the newest
 * of them current (listed, the commit point being the conditional create of the next one), and
 * `version-hint.text` for readers that open a table by its folder.
 */
import { PreconditionFailedError } from '../store/errors.js';
import type { ObjectStore } from '../store/store.js';
import { IcebergMetadataError } from './errors.js';
import type { TableMetadata } from './table-metadata.js';

const METADATA_FILE = /\/v(\d+)\.metadata\.json$/;

export function metadataKey(table: string, version: number): string {
  return `${table}/metadata/v${version}.metadata.json`;
}

/** The newest metadata version of a table (listed, not the hint: a crash may have left the hint behind), null when none. */
export async function readCurrentVersion(
  store: ObjectStore,
  table: string,
): Promise<{ version: number; key: string; meta: TableMetadata } | null> {
  let version = 0;
  for await (const o of store.list(`${table}/metadata/`, { etags: false })) {
    const m = METADATA_FILE.exec(o.key);
    if (m && o.key === metadataKey(table, Number(m[1]))) version = Math.max(version, Number(m[1]));
  }
  if (version === 0) return null;
  const key = metadataKey(table, version);
  const obj = await store.get(key);
  if (!obj) throw new IcebergMetadataError(key, 'listed but gone');
  try {
    return { version, key, meta: JSON.parse(obj.body.toString('utf8')) as TableMetadata };
  } catch (err) {
    throw new IcebergMetadataError(key, `not valid JSON (${(err as Error).message})`);
  }
}

/**
 * Creates `metadata/v<version>.metadata.json` only if absent (the commit point), then refreshes
 * the hint; its key, or null when another writer created that version first.
 */
export async function writeVersion(store: ObjectStore, table: string, version: number, meta: TableMetadata): Promise<string | null> {
  const key = metadataKey(table, version);
  try {
    await store.put(key, JSON.stringify(meta, null, 2), { contentType: 'application/json', ifNoneMatch: '*' });
  } catch (err) {
    if (err instanceof PreconditionFailedError) return null;
    throw err;
  }
  await refreshHint(store, table, version);
  return key;
}

/**
 * `metadata/version-hint.text`: the current version for readers that open a table by its folder
 * (DuckDB's iceberg_scan, icebird). Only a hint: commits go by the metadata files themselves.
 */
export async function refreshHint(store: ObjectStore, table: string, version: number): Promise<void> {
  const key = `${table}/metadata/version-hint.text`;
  const hint = await store.get(key);
  if (hint?.body.toString('utf8').trim() === String(version)) return;
  await store.put(key, String(version), { contentType: 'text/plain' });
}
