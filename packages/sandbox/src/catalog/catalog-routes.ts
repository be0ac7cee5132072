/**
 * The catalog's routes (below `/iceberg`), as the Apache Iceberg REST catalog protocol names them
 * (open-api/rest-catalog-open-api.yaml of apache/iceberg at
 * 7f879b11366e17a676a03f15247a821751415529): getConfig, namespaces (create, load, exists, list,
 * drop), tables (create, load, exists, commit, list, drop). Namespace levels in a path are joined
 * by the unit separator (%1F), as the spec's default `namespace-separator`.
 */
import { CatalogHttpError } from './catalog-errors.js';
import type { CatalogStore, StoredTable } from './catalog-store.js';
import type { Json } from './table-metadata.js';

export type RouteName =
  | 'getConfig'
  | 'getToken'
  | 'listNamespaces'
  | 'createNamespace'
  | 'loadNamespaceMetadata'
  | 'namespaceExists'
  | 'dropNamespace'
  | 'listTables'
  | 'createTable'
  | 'loadTable'
  | 'tableExists'
  | 'updateTable'
  | 'dropTable';

export interface CatalogRoute {
  name: RouteName;
  namespace: string[];
  table: string;
}

export interface RouteAnswer {
  status: number;
  body?: unknown;
}

const ROUTES: Record<string, RouteName> = {
  'GET namespaces': 'listNamespaces',
  'POST namespaces': 'createNamespace',
  'GET namespace': 'loadNamespaceMetadata',
  'HEAD namespace': 'namespaceExists',
  'DELETE namespace': 'dropNamespace',
  'GET tables': 'listTables',
  'POST tables': 'createTable',
  'GET table': 'loadTable',
  'HEAD table': 'tableExists',
  'POST table': 'updateTable',
  'DELETE table': 'dropTable',
};

function notFound(method: string, path: string): CatalogHttpError {
  return new CatalogHttpError(404, 'NoSuchRouteException', `no route for ${method} ${path}`);
}

/** The route of a path below /iceberg; `prefix` is the one the catalog requires (undefined: none). */
export function matchCatalogRoute(method: string, path: string, prefix: string | undefined): CatalogRoute {
  if (method === 'GET' && path === '/v1/config') return { name: 'getConfig', namespace: [], table: '' };
  if (method === 'POST' && path === '/v1/oauth/tokens') return { name: 'getToken', namespace: [], table: '' };
  let segs: string[];
  try {
    segs = path.split('/').slice(1).map(decodeURIComponent);
  } catch {
    throw new CatalogHttpError(400, 'BadRequestException', 'malformed URL path encoding');
  }
  if (segs[0] !== 'v1') throw notFound(method, path);
  let rest = segs.slice(1);
  if (prefix !== undefined) {
    if (rest[0] !== prefix) throw notFound(method, path);
    rest = rest.slice(1);
  }
  if (rest[0] !== 'namespaces') throw notFound(method, path);
  const shape = ['namespaces', 'namespace', 'tables', 'table'][rest.length - 1];
  const name = shape && (rest.length !== 3 || rest[2] === 'tables') ? ROUTES[`${method} ${shape}`] : undefined;
  if (!name || (rest.length === 4 && rest[2] !== 'tables')) throw notFound(method, path);
  return { name, namespace: rest[1]?.split('\u001f') ?? [], table: rest[3] ?? '' };
}

/** LoadTableResult: the metadata, its location, and no table config. */
function loadResult(t: StoredTable): Json {
  return { 'metadata-location': t.metadataLocation, metadata: t.metadata, config: {} };
}

function need(body: unknown, what: string): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new CatalogHttpError(400, 'BadRequestException', `${what}: a JSON object is required`);
  }
  return body as Json;
}

/** The answer of a namespace or table route (config and tokens are the server's). */
export async function answerCatalogRoute(
  store: CatalogStore,
  r: CatalogRoute,
  query: URLSearchParams,
  body: unknown,
  now: number,
): Promise<RouteAnswer> {
  const ns = r.namespace;
  switch (r.name) {
    case 'listNamespaces': {
      const parent = query.get('parent');
      return { status: 200, body: { namespaces: store.listNamespaces(parent ? parent.split('\u001f') : []) } };
    }
    case 'createNamespace': {
      const req = need(body, 'CreateNamespaceRequest');
      const properties = (req.properties as Record<string, string> | undefined) ?? {};
      store.createNamespace(req.namespace as string[], properties);
      return { status: 200, body: { namespace: req.namespace, properties } };
    }
    case 'loadNamespaceMetadata':
      return { status: 200, body: { namespace: ns, properties: store.namespace(ns) } };
    case 'namespaceExists':
      store.namespace(ns);
      return { status: 204 };
    case 'dropNamespace':
      store.dropNamespace(ns);
      return { status: 204 };
    case 'listTables':
      return { status: 200, body: { identifiers: store.listTables(ns) } };
    case 'createTable':
      return { status: 200, body: loadResult(await store.createTable(ns, need(body, 'CreateTableRequest'), now)) };
    case 'loadTable':
      return { status: 200, body: loadResult(store.table(ns, r.table)) };
    case 'tableExists':
      store.table(ns, r.table);
      return { status: 204 };
    case 'updateTable': {
      const req = need(body, 'CommitTableRequest');
      const t = await store.commit(ns, r.table, (req.requirements as Json[]) ?? [], (req.updates as Json[]) ?? [], now);
      return { status: 200, body: { 'metadata-location': t.metadataLocation, metadata: t.metadata } };
    }
    case 'dropTable':
      store.dropTable(ns, r.table);
      return { status: 204 };
    default:
      throw new CatalogHttpError(404, 'NoSuchRouteException', `no route ${r.name}`);
  }
}
