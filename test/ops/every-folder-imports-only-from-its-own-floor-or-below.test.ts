/**
 * The layering rule of docs/architecture.md ("## Layers"): each folder of src/ (and each file at
 * its root) sits on one floor of that numbered list, and imports only from its own floor or below.
 * The order is written once, in the doc; this test reads it from there.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const src = join(root, 'src');

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

/** Every relative import of a file: static, re-export and dynamic. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'(\.[^']+)'/gm)].map((m) => resolve(dirname(file), m[1]!));
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

  it('would catch an upward import (the check reads imports as the code writes them)', () => {
    // The same files with the floors of source/ and run/ swapped: run's imports of source/ are then upward.
    const swapped = floors.map((members) => members.map((m) => (m === 'source' ? 'run' : m === 'run' ? 'source' : m)));
    expect(upwardImports(swapped).some((line) => line.startsWith('run (floor 3) -> source'))).toBe(true);
  });
});
