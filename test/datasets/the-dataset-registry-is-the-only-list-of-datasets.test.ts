/**
 * src/datasets/index.ts is the one list of datasets, and dataset-specific rules are capability
 * checks: outside a dataset's own module, the registry, the client operations (src/source/) and
 * the sandbox's routes (its own package, packages/sandbox), no source file tests a dataset by its name, writes a list of
 * dataset names, or picks a dataset module by hand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATASET_NAMES, DATASETS } from '../../src/datasets/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const REGISTRY = 'src/datasets/index.ts';
/** Where a dataset's name is the name of something else: the list operations. */
const OTHER_MEANINGS = ['src/source/'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const files = sourceFiles(SRC).map((f) => ({ path: relative(ROOT, f).split('\\').join('/'), text: readFileSync(f, 'utf8') }));

/** The module that declares a dataset: the file with its `name: '<dataset>'` beside its capabilities. */
function moduleOf(name: string): string {
  const found = files.filter(
    (f) => f.path.startsWith('src/datasets/') && new RegExp(`\\bname: '${name}',\\n\\s*capabilities:`).test(f.text),
  );
  expect(found.map((f) => f.path)).toHaveLength(1);
  return found[0]!.path;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Ways a file tests, lists or keys a dataset by its name. */
function namePatterns(name: string): RegExp[] {
  const q = `['"\`]${escape(name)}['"\`]`;
  const others = DATASET_NAMES.filter((n) => n !== name)
    .map(escape)
    .join('|');
  return [
    new RegExp(`[=!]==?\\s*${q}`),
    new RegExp(`${q}\\s*[=!]==?`),
    new RegExp(`\\.(includes|indexOf|has|get|startsWith)\\(\\s*${q}\\s*\\)`),
    new RegExp(`(startsWith\\(['"\`]|\`)${escape(name)}/`),
    new RegExp(`case\\s+${q}`),
    new RegExp(`${q}\\s*,\\s*['"\`](${others})['"\`]`),
    new RegExp(`^\\s*${escape(name)}:\\s*\\w+Dataset\\b`, 'm'),
  ];
}

describe('the dataset registry', () => {
  it('lists every dataset module once, under its own name', () => {
    expect(DATASET_NAMES.length).toBeGreaterThan(0);
    expect(new Set(DATASET_NAMES).size).toBe(DATASET_NAMES.length);
    for (const name of DATASET_NAMES) expect(DATASETS[name].name).toBe(name);
  });

  it('is the only place that names a dataset in a test, a list or a lookup', () => {
    const found: string[] = [];
    for (const name of DATASET_NAMES) {
      const own = moduleOf(name);
      for (const f of files) {
        if (f.path === own || f.path === REGISTRY || OTHER_MEANINGS.some((p) => f.path.startsWith(p))) continue;
        for (const re of namePatterns(name)) {
          const m = re.exec(f.text);
          if (m) found.push(`${f.path}: ${m[0].trim()}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  it('is the only importer of the dataset objects', () => {
    const importers: string[] = [];
    for (const name of DATASET_NAMES) {
      const declared = new RegExp(`export const (\\w+): Dataset<[^=]*'${name}'[^=]*>`).exec(
        files.find((f) => f.path === moduleOf(name))!.text,
      );
      expect(declared).not.toBeNull();
      const imported = new RegExp(`import\\s*{[^}]*\\b${declared![1]}\\b[^}]*}\\s*from`);
      for (const f of files) if (f.path !== REGISTRY && imported.test(f.text)) importers.push(`${f.path}: ${declared![1]}`);
    }
    expect(importers).toEqual([]);
  });
});
