/**
 * Every error this tool throws on purpose is an InsightExportError (src/errors.ts): a short
 * message, details and what to do, an exit code, and walk. No class in src/ extends a built-in
 * error class but the base itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const BUILT_IN = ['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

it('no class in src/ extends a built-in error class but InsightExportError', () => {
  const extendsBuiltIn = new RegExp(`class\\s+(\\w+)(?:<[^>]*>)?\\s+extends\\s+(?:${BUILT_IN.join('|')})\\b`, 'g');
  const found: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const path = relative(ROOT, file).split('\\').join('/');
    for (const m of readFileSync(file, 'utf8').matchAll(extendsBuiltIn)) found.push(`${path}: ${m[1]}`);
  }
  expect(found).toEqual(['src/errors.ts: InsightExportError']);
});
