/**
 * What the sandbox's Iceberg REST catalog holds: namespaces, and per table the location of its
 * current metadata file. Each commit writes a new metadata file, as a real catalog does
 * (`metadata/<5-digit version>-<uuid>.metadata.json`, the naming of Iceberg's Java
 * BaseMetastoreTableOperations), and adds the previous one to the metadata-log. A table whose
 * location is a local path or a file: URI gets its metadata files there; any other location
 * (s3://...) gets them there through `writeObject` when given (a test's S3 client, or the CLI's
 * S3 store), else under the warehouse folder, since the sandbox itself has no way to reach S3. A
 * warehouse on S3 (`s3://bucket/prefix`, only with `writeObject`) is the default location of the
 * tables created without one; the local folder then holds nothing and is a temporary one.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { SandboxOptionsError } from '../errors.js';
import { CatalogHttpError } from './catalog-errors.js';
import { applyUpdates } from './table-updates.js';
import { blankTableMetadata, checkRequirement, newTableMetadata, type Json, type TableMetadata } from './table-metadata.js';

export interface StoredTable {
  metadata: TableMetadata;
  metadataLocation: string;
  /** How many metadata files the table has had (the version of the current one). */
  version: number;
}

const SEP = '\u001f';
const key = (ns: string[]) => ns.join(SEP);

export class CatalogStore {
  private readonly namespaces = new Map<string, Record<string, string>>();
  private readonly tables = new Map<string, StoredTable>();
  private folder: string | undefined;

  /** An S3 warehouse (s3://bucket/prefix), without its trailing slash. */
  private readonly s3Warehouse: string | undefined;
  private readonly warehouse: string | undefined;

  /**
   * `warehouse`: a folder (created when missing), or an S3 prefix when `writeObject` is given;
   * undefined: a temporary folder, removed by close().
   */
  constructor(
    warehouse: string | undefined,
    private readonly writeObject?: (uri: string, text: string) => Promise<void>,
  ) {
    const s3 = warehouse !== undefined && /^s3:\/\//i.test(warehouse);
    if (s3 && !writeObject) {
      throw new SandboxOptionsError(`The catalog's warehouse ${warehouse} is on S3 and the sandbox has no way to write there`, {
        hint: 'run it as `insight-export sandbox --catalog-warehouse s3://...` (the CLI writes the metadata files with its S3 store), or give a folder',
      });
    }
    this.s3Warehouse = s3 ? warehouse.replace(/\/+$/, '') : undefined;
    this.warehouse = s3 ? undefined : warehouse;
  }

  /** The warehouse folder (a temporary one is made on first use). */
  async warehouseFolder(): Promise<string> {
    if (this.folder) return this.folder;
    const folder = this.warehouse ?? (await mkdtemp(join(tmpdir(), 'sandbox-catalog-')));
    await mkdir(folder, { recursive: true });
    this.folder = folder;
    return folder;
  }

  async close(): Promise<void> {
    if (this.warehouse === undefined && this.folder) await rm(this.folder, { recursive: true, force: true });
  }

  createNamespace(ns: string[], properties: Record<string, string>): void {
    if (this.namespaces.has(key(ns)))
      throw new CatalogHttpError(409, 'AlreadyExistsException', `Namespace already exists: ${ns.join('.')}`);
    this.namespaces.set(key(ns), { ...properties });
  }

  namespace(ns: string[]): Record<string, string> {
    const props = this.namespaces.get(key(ns));
    if (!props) throw new CatalogHttpError(404, 'NoSuchNamespaceException', `Namespace does not exist: ${ns.join('.')}`);
    return props;
  }

  /** The namespaces directly under `parent` (all top-level ones for []). */
  listNamespaces(parent: string[]): string[][] {
    if (parent.length > 0) this.namespace(parent);
    const all = [...this.namespaces.keys()].map((k) => k.split(SEP));
    return all.filter((ns) => ns.length === parent.length + 1 && parent.every((p, i) => ns[i] === p));
  }

  dropNamespace(ns: string[]): void {
    this.namespace(ns);
    if (this.listTables(ns).length > 0)
      throw new CatalogHttpError(409, 'NamespaceNotEmptyException', `Namespace is not empty: ${ns.join('.')}`);
    this.namespaces.delete(key(ns));
  }

  listTables(ns: string[]): { namespace: string[]; name: string }[] {
    this.namespace(ns);
    return [...this.tables.keys()]
      .map((k) => k.split(SEP))
      .filter((parts) => parts.length === ns.length + 1 && ns.every((p, i) => parts[i] === p))
      .map((parts) => ({ namespace: parts.slice(0, -1), name: parts.at(-1)! }));
  }

  table(ns: string[], name: string): StoredTable {
    this.namespace(ns);
    const t = this.tables.get(key([...ns, name]));
    if (!t) throw new CatalogHttpError(404, 'NoSuchTableException', `Table does not exist: ${[...ns, name].join('.')}`);
    return t;
  }

  dropTable(ns: string[], name: string): void {
    this.table(ns, name);
    this.tables.delete(key([...ns, name]));
  }

  async createTable(ns: string[], req: Json, now: number): Promise<StoredTable> {
    this.namespace(ns);
    const name = req.name as string;
    if (this.tables.has(key([...ns, name]))) {
      throw new CatalogHttpError(409, 'AlreadyExistsException', `Table already exists: ${[...ns, name].join('.')}`);
    }
    const location = (req.location as string | undefined) ?? (await this.defaultLocation(ns, name));
    return this.write(ns, name, newTableMetadata(req, location.replace(/\/$/, ''), now), undefined);
  }

  /**
   * A commit: every requirement checked against the table as it is, then the updates applied and
   * a new metadata file written. A missing table with assert-create is created by the commit.
   */
  async commit(ns: string[], name: string, requirements: Json[], updates: Json[], now: number): Promise<StoredTable> {
    this.namespace(ns);
    const current = this.tables.get(key([...ns, name]));
    for (const r of requirements) checkRequirement(current?.metadata, r);
    if (!current && !requirements.some((r) => r.type === 'assert-create')) {
      throw new CatalogHttpError(404, 'NoSuchTableException', `Table does not exist: ${[...ns, name].join('.')}`);
    }
    const base = current?.metadata ?? blankTableMetadata(await this.defaultLocation(ns, name), now);
    return this.write(ns, name, applyUpdates(base, updates, now), current);
  }

  private async defaultLocation(ns: string[], name: string): Promise<string> {
    if (this.s3Warehouse) return [this.s3Warehouse, ...ns, name].join('/');
    return pathToFileURL(join(await this.warehouseFolder(), ...ns, name)).href;
  }

  /** Where a table's metadata files go: its location when local, else a folder of the warehouse. */
  private async metadataFolder(location: string, ns: string[], name: string): Promise<string> {
    if (location.startsWith('file:')) return join(fileURLToPath(location), 'metadata');
    if (location.startsWith('/')) return join(location, 'metadata');
    return join(await this.warehouseFolder(), ...ns, name, 'metadata');
  }

  /** Writes a metadata file where the table's location says; its location. */
  private async writeMetadata(location: string, ns: string[], name: string, fileName: string, text: string): Promise<string> {
    const local = location.startsWith('file:') || location.startsWith('/');
    if (!local && this.writeObject) {
      const uri = `${location}/metadata/${fileName}`;
      await this.writeObject(uri, text);
      return uri;
    }
    const folder = await this.metadataFolder(location, ns, name);
    await mkdir(folder, { recursive: true });
    const file = join(folder, fileName);
    await writeFile(file, text);
    return location.startsWith('/') ? file : pathToFileURL(file).href;
  }

  private async write(ns: string[], name: string, next: TableMetadata, previous: StoredTable | undefined): Promise<StoredTable> {
    const version = (previous?.version ?? 0) + 1;
    if (previous) {
      next['metadata-log'] = [
        ...previous.metadata['metadata-log'],
        { 'metadata-file': previous.metadataLocation, 'timestamp-ms': previous.metadata['last-updated-ms'] },
      ];
    }
    const fileName = `${String(version).padStart(5, '0')}-${randomUUID()}.metadata.json`;
    const metadataLocation = await this.writeMetadata(next.location, ns, name, fileName, JSON.stringify(next, null, 2));
    const stored = { metadata: next, metadataLocation, version };
    this.tables.set(key([...ns, name]), stored);
    return stored;
  }
}
