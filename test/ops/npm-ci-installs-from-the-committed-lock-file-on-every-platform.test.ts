/**
 * Issue 31.5: `npm ci` refused the committed lock file (EUSAGE, "Missing:
 * @duckdb/node-bindings-darwin-arm64@1.5.6-r.1 from lock file"), and the first `npm install`
 * rewrote it (+154 lines), leaving a fresh clone dirty. npm checks that every dependency a locked
 * package declares, optional platform binaries of every system included, has its own entry: here
 * the same check, on the committed lock file, and CI and the image install with `npm ci`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from './helpers.js';

interface Locked {
  name?: string;
  version?: string;
  license?: string;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  /** A workspace package: the entry points at its folder's entry (`resolved`). */
  link?: boolean;
  resolved?: string;
}

const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, Locked> };
const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Locked;

/** The lock entry Node would load `name` from, required by the package at `from` ("" is the project). */
function entryFor(from: string, name: string): Locked | undefined {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
    const hit = lock.packages[`${dir ? `${dir}/` : ''}node_modules/${name}`];
    if (hit?.link) return lock.packages[hit.resolved!];
    if (hit || dir === '') return hit;
  }
}

it("the lock file is the package.json's, with an entry for every dependency of every locked package, other platforms' binaries included", () => {
  // What npm copies from package.json into the lock file's root entry (npm install rewrites it when they differ).
  for (const field of ['name', 'version', 'license', 'bin', 'engines', 'dependencies', 'devDependencies'] as const)
    expect(lock.packages['']?.[field], field).toEqual(manifest[field]);
  const missing: string[] = [];
  let optional = 0;
  for (const [at, pkg] of Object.entries(lock.packages)) {
    const wanted = { ...pkg.dependencies, ...pkg.optionalDependencies, ...(at === '' ? pkg.devDependencies : {}) };
    for (const [name, range] of Object.entries(wanted)) {
      if (pkg.optionalDependencies?.[name]) optional++;
      const found = entryFor(at, name);
      // Platform packages are pinned to one version: the entry must hold exactly that one.
      const exact = /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(range);
      if (!found || (exact && found.version !== range)) missing.push(`${name}@${range} (for ${at || 'the project'})`);
    }
  }
  expect(missing).toEqual([]);
  // DuckDB's bindings for macOS, Windows and Linux arm64/musl are among them (they were the ones missing).
  expect(optional).toBeGreaterThanOrEqual(8);
  for (const platform of ['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'win32-x64'])
    expect(lock.packages[`node_modules/@duckdb/node-bindings-${platform}`], platform).toBeDefined();
});

it('CI and the container image install with npm ci, from the lock file alone', () => {
  const ci = readFileSync(join(REPO, '.ci/run'), 'utf8')
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'));
  expect(ci.some((l) => /^npm ci\b/.test(l.trim()))).toBe(true);
  expect(ci.some((l) => /^npm install\b/.test(l.trim()))).toBe(false);
  const docker = readFileSync(join(REPO, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim().startsWith('RUN '));
  expect(docker.filter((l) => /\bnpm ci\b/.test(l))).toHaveLength(2);
  expect(docker.some((l) => /\bnpm install\b/.test(l))).toBe(false);
});
