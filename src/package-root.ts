import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface OwnPackage {
  /** The folder of insight-export's package.json: the repository, or the installed package. */
  dir: string;
  version: string;
}

let found: OwnPackage | null | undefined;

/**
 * insight-export's own package, found by walking up from this module: it runs from src/ (tsx),
 * dist/ (the library) or dist/bin/ (the bundled CLI), so no fixed relative path fits all three.
 * The packaged config file and the version are read from there.
 */
export function ownPackage(): OwnPackage | null {
  if (found !== undefined) return found;
  found = null;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)), i = 0; i < 6; dir = path.dirname(dir), i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'insight-export' && pkg.version) return (found = { dir, version: pkg.version });
    } catch {
      // no package.json here: look one folder up
    }
  }
  return found;
}
