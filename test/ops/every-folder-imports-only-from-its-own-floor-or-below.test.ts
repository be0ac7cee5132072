/**
 * The layering rule of docs/architecture.md ("## Layers"): each folder of src/ (and each file at
 * its root) sits on one floor of that numbered list, and imports only from its own floor or below.
 * The order is written once, in the doc; this test reads it from there. The sandbox package
 * (packages/sandbox) and the product meet only where the doc says: the product and the tests import
 * the sandbox by its public entries, the sandbox imports only src/shared-with-sandbox.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const src = join(root, 'src');
const sandbox = join(root, 'packages/sandbox');

/** The floors of the doc's Layers list, ground floor first: each a list of `src/...` members. */
export function floorsOf(doc: string): string[][] {
  const section = /^## Layers\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1];
  if (!section) throw new Error('docs/architecture.md has no "## Layers" section');
  const floors: string[][] = [];
  for (const line of section.split('\n')) {
    const item = /^(\d+)\. ((?:`src\/[^`]+`(?:, )?)+)/.exec(line);
    if (!item) continue;
    expect(Number(item[1]), `floor numbers in order: ${line.slice(0, 60)}`).toBe(floors.length + 1);
    floors.push([...item[2]!.matchAll(/`src\/([^`]+?)\/?`/g)].map((m) => m[1]!));
  }
  return floors;
}

/** The member of src/ a path belongs to: its top folder, or the root file itself. */
const memberOf = (path: string): string => relative(src, path).split('/')[0]!.replace(/\.js$/, '.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every import of a file as written (static, re-export and dynamic): a path or a package name. */
function specifiersOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'([^']+)'/gm)].map((m) => m[1]!);
}

/** Every relative import of a file, resolved. */
function importsOf(file: string): string[] {
  return specifiersOf(file)
    .filter((s) => s.startsWith('.'))
    .map((s) => resolve(dirname(file), s));
}

const SANDBOX_ENTRIES = ['@insight-export/sandbox', '@insight-export/sandbox/rpc'];

/** `file -> import` for every import of the sandbox other than by its public entries (`product`: by its main entry only). */
export function sandboxImportsPastItsEntry(files: string[], entries: string[]): string[] {
  return files.flatMap((file) =>
    specifiersOf(file)
      .filter(
        (s) =>
          (s.startsWith('@insight-export/sandbox') && !entries.includes(s)) ||
          (s.startsWith('.') && isInside(sandbox, resolve(dirname(file), s))),
      )
      .map((s) => `${relative(root, file)} -> ${s}`),
  );
}

/** `file -> import` for every import of a sandbox file that leaves the package other than for src/shared-with-sandbox.ts. */
export function sandboxImportsOfTheProduct(): string[] {
  const shared = join(src, 'shared-with-sandbox.js');
  return sourceFiles(join(sandbox, 'src')).flatMap((file) =>
    specifiersOf(file)
      .filter((s) =>
        s.startsWith('.') ? !isInside(sandbox, resolve(dirname(file), s)) && resolve(dirname(file), s) !== shared : s === 'insight-export',
      )
      .map((s) => `${relative(root, file)} -> ${s}`),
  );
}

const isInside = (dir: string, path: string): boolean => !relative(dir, path).startsWith('..');

/** The import circles among files (type imports counted): each a list of files, found by Tarjan's strongly connected components. */
export function importCircles(files: string[]): string[][] {
  const known = new Set(files);
  const edges = new Map(
    files.map((f) => [
      f,
      importsOf(f)
        .map((t) => t.replace(/\.js$/, '.ts'))
        .filter((t) => known.has(t)),
    ]),
  );
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) visit(w);
      if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, low.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const circle = stack.splice(stack.indexOf(v));
    if (circle.length > 1) circles.push(circle.map((f) => relative(root, f)).sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return circles;
}

/** `importer -> imported (file)` for every import of a floor above the importer's. */
export function upwardImports(floors: string[][]): string[] {
  const floor = new Map(floors.flatMap((members, i) => members.map((m) => [m, i] as const)));
  const found: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = memberOf(file);
    for (const target of importsOf(file)) {
      const to = memberOf(target);
      if (to === from || !floor.has(from) || !floor.has(to)) continue;
      if (floor.get(to)! > floor.get(from)!)
        found.push(`${from} (floor ${floor.get(from)! + 1}) -> ${to} (floor ${floor.get(to)! + 1}) in ${relative(root, file)}`);
    }
  }
  return found;
}

const floors = floorsOf(readFileSync(join(root, 'docs/architecture.md'), 'utf8'));

describe('the layers of docs/architecture.md', () => {
  it('list every folder and root file of src/, each once', () => {
    const listed = floors.flat();
    const present = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => e.name);
    expect(listed.filter((m, i) => listed.indexOf(m) !== i)).toEqual([]);
    expect([...present].sort()).toEqual([...listed].sort());
  });

  it('are kept: no file of src/ imports from a floor above its own', () => {
    expect(upwardImports(floors)).toEqual([]);
  });

  it('keep the sandbox a package: the product, tests and benches import it by its public entries only', () => {
    expect(sandboxImportsPastItsEntry(sourceFiles(src), ['@insight-export/sandbox'])).toEqual([]);
    const outside = [...sourceFiles(join(root, 'test')), ...sourceFiles(join(root, 'bench')), ...sourceFiles(join(root, 'scripts'))];
    expect(sandboxImportsPastItsEntry(outside, SANDBOX_ENTRIES)).toEqual([]);
  });

  it('keep the sandbox off the product: it imports from src/ only src/shared-with-sandbox.ts', () => {
    expect(sandboxImportsOfTheProduct()).toEqual([]);
  });

  it('keep the sandbox free of import circles', () => {
    expect(importCircles(sourceFiles(join(sandbox, 'src')))).toEqual([]);
  });

  it('would catch an upward import (the check reads imports as the code writes them)', () => {
    // The same files with the floors of source/ and run/ swapped: run's imports of source/ are then upward.
    const swapped = floors.map((members) => members.map((m) => (m === 'source' ? 'run' : m === 'run' ? 'source' : m)));
    expect(upwardImports(swapped).some((line) => line.startsWith('run (floor 3) -> source'))).toBe(true);
  });
});
