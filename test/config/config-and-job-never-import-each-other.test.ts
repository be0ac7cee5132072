/**
 * Issue 32.3: the settings table and the value parsers sit below both config/ and job/
 * (src/settings/, src/yaml-file/), so the resolver and the job file's schema read them from
 * there and neither folder imports the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** The src/ folders that the modules of `folder` import from, with the importing file. */
function importedFolders(folder: string): { file: string; folder: string }[] {
  const dir = path.join(SRC, folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => {
      const text = readFileSync(path.join(dir, f), 'utf8');
      return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => {
        const target = path.relative(SRC, path.resolve(dir, m[1]!));
        return { file: `${folder}/${f}`, folder: target.includes('/') ? target.split('/')[0]! : '.' };
      });
    });
}

describe('config/ and job/ take the settings from below and never import each other', () => {
  it('config/ imports nothing from job/', () => {
    expect(importedFolders('config').filter((i) => i.folder === 'job')).toEqual([]);
  });

  it('job/ imports nothing from config/', () => {
    expect(importedFolders('job').filter((i) => i.folder === 'config')).toEqual([]);
  });

  it('both read the settings table from src/settings/', () => {
    expect(importedFolders('config').some((i) => i.folder === 'settings')).toBe(true);
    expect(importedFolders('job').some((i) => i.folder === 'settings')).toBe(true);
  });
});
