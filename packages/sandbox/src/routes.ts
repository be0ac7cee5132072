import { badRequest } from './errors.js';
import type { SandboxRoute } from './options.js';

export interface Matched {
  route: SandboxRoute;
  params: string[];
}

export interface RoutePrefixes {
  /** The read interface's path prefix, e.g. /insights/v1 (no trailing slash). */
  prefix: string;
  /** The explorer's, e.g. /api/v2. */
  explorerPrefix: string;
  /** Also serve the ungrouped addresses/<hash>/nft route. */
  nftUngroupedRoute?: boolean | undefined;
}

export function normalisePrefix(p: string): string {
  const s = p.startsWith('/') ? p : `/${p}`;
  return s.endsWith('/') ? s.slice(0, -1) : s;
}

/** The route a request's method and path name, with its path parameters; null when none does. */
export function matchRoute(method: string, path: string, p: RoutePrefixes): Matched | null {
  const under = (prefix: string) => path.startsWith(prefix + '/');
  const segments = (prefix: string) =>
    path
      .slice(prefix.length + 1)
      .split('/')
      .map(decodeURIComponent);
  try {
    if (under(p.prefix)) {
      const segs = segments(p.prefix);
      if (method === 'GET' && segs.length === 3 && segs[0] === 'wallets' && segs[2] === 'transactions')
        return { route: 'transactions', params: [segs[1]!] };
      if (method === 'GET' && segs.length === 3 && segs[0] === 'events') return { route: 'events', params: [segs[1]!, segs[2]!] };
      if (method === 'GET' && segs.length === 2 && segs[0] === 'resolve') return { route: 'resolve', params: [segs[1]!] };
      if (method === 'POST' && segs.length === 2 && segs[0] === 'decode') return { route: 'decode', params: [segs[1]!] };
    } else if (under(p.explorerPrefix)) {
      const segs = segments(p.explorerPrefix);
      if (method === 'GET' && segs.length === 4 && segs[0] === 'addresses' && segs[2] === 'nft' && segs[3] === 'collections') {
        return { route: 'nft', params: [segs[1]!] };
      }
      if (p.nftUngroupedRoute && method === 'GET' && segs.length === 3 && segs[0] === 'addresses' && segs[2] === 'nft') {
        return { route: 'nft-list', params: [segs[1]!] };
      }
    }
  } catch {
    throw badRequest('malformed URL path encoding');
  }
  return null;
}
