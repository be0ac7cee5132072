/**
 * YAML (and JSON, which YAML 1.2 reads) with positions kept, so that every problem found later
 * can name file:line:column and the field path.
 */
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Document,
  type Node,
  type Pair,
  type ParsedNode,
} from 'yaml';
import type { FieldPath, Position } from './field-path.js';
import type { FileProblem } from './problems.js';
import { nestedTooDeep, syntaxProblemsOf } from './syntax-problems.js';

export { formatFieldPath, type FieldPath, type Position } from './field-path.js';

export interface YamlDoc {
  file: string;
  /** The plain value: mappings as objects; integers beyond 2^53 as digit strings (exact, never rounded). */
  value: unknown;
  /** Syntax errors (empty when the text parsed). */
  syntaxProblems: FileProblem[];
  /** Where the value at `path` is written; `key: true` points at the key instead (unknown keys). */
  locate(path: FieldPath, opts?: { key?: boolean }): Position;
  /** The YAML node at `path`, if it exists (to tell e.g. a bigint from a string). */
  nodeAt(path: FieldPath): Node | undefined;
}

function toPlain(v: unknown): unknown {
  if (typeof v === 'bigint') {
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}

/** Collections nested deeper than this are refused before the document is composed (see parseYaml). */
const MAX_NESTING = 100;

/** A document nested too deep to compose: no value, one problem, and every path located there. */
function tooDeepDoc(text: string, file: string, tooDeep: number): YamlDoc {
  const before = text.slice(0, tooDeep);
  const problem = {
    file,
    line: before.split('\n').length,
    column: tooDeep - before.lastIndexOf('\n'),
    field: '',
    message: `YAML nested more than ${MAX_NESTING} levels deep`,
  };
  return {
    file,
    value: undefined,
    syntaxProblems: [problem],
    locate: () => ({ line: problem.line, column: problem.column }),
    nodeAt: () => undefined,
  };
}

const start = (n: Node | null | undefined): number | undefined => (n as ParsedNode | null | undefined)?.range?.[0];

/** The node at `path` (and its key), or how far the path reaches; aliases followed. */
function walk(
  doc: Document.Parsed,
  path: FieldPath,
): { node: Node | null | undefined; keyNode?: Node | undefined; parent: Node | null | undefined; found: boolean } {
  let node: Node | null | undefined = doc.contents as Node | null;
  let parent: Node | null | undefined = node;
  let keyNode: Node | undefined;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    if (isAlias(node)) node = node.resolve(doc) as Node | undefined;
    if (isMap(node)) {
      const pair: Pair | undefined = node.items.find(
        (it) => isPair(it) && String(isScalar(it.key) ? it.key.value : it.key) === String(seg),
      );
      if (!pair) return { node, parent: node, found: false };
      parent = node;
      keyNode = pair.key as Node;
      node = (pair.value as Node | null) ?? null;
      if (node === null) return { node: null, keyNode, parent, found: i === path.length - 1 };
    } else if (isSeq(node) && typeof seg === 'number' && seg < node.items.length) {
      parent = node;
      keyNode = undefined;
      node = node.items[seg] as Node;
    } else {
      return { node, parent, found: false };
    }
  }
  return { node, keyNode, parent, found: true };
}

export function parseYaml(text: string, file: string): YamlDoc {
  // yaml 2.x (on Node 20's V8) kills the process with "RegExpCompiler Allocation failed" when a
  // second document nested ~1000 levels deep is composed in the same process (`validate a b`):
  // such nesting is refused first, from the syntax tree alone (which handles it fine).
  const tooDeep = nestedTooDeep(text, MAX_NESTING);
  if (tooDeep !== undefined) return tooDeepDoc(text, file, tooDeep);
  const lineCounter = new LineCounter();
  const doc: Document.Parsed = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    // Merge keys (`<<: *common`), as docker-compose files use them with `x-` blocks.
    merge: true,
    // Integers come back as BigInt so nothing is rounded; see toPlain.
    intAsBigInt: true,
    // YAML 1.2 reads 0x... and 0o... as numbers: an unquoted address would become a (rounded)
    // integer. Without these two tags they stay strings.
    customTags: (tags) => tags.filter((t) => !(typeof t === 'object' && 'format' in t && (t.format === 'HEX' || t.format === 'OCT'))),
  });
  const posOf = (offset: number): Position => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };

  const locate = (path: FieldPath, opts: { key?: boolean } = {}): Position => {
    const w = walk(doc, path);
    const offset = w.found ? (opts.key ? (start(w.keyNode) ?? start(w.node)) : (start(w.node) ?? start(w.keyNode))) : start(w.node);
    return posOf(offset ?? 0);
  };

  const nodeAt = (path: FieldPath): Node | undefined => {
    const w = walk(doc, path);
    return w.found ? (w.node ?? undefined) : undefined;
  };

  const syntaxProblems = syntaxProblemsOf(doc, text, file, posOf);

  let value: unknown;
  try {
    value = syntaxProblems.length ? undefined : toPlain(doc.toJS({ maxAliasCount: 100 }));
  } catch (err) {
    syntaxProblems.push({ file, line: 1, column: 1, field: '', message: `cannot be read: ${(err as Error).message}` });
  }
  return { file, value, syntaxProblems, locate, nodeAt };
}

/** `output:` with every line under it commented out is null in YAML: treat such sections as absent. */
export function dropEmptySections(value: unknown, sections: readonly string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const k of sections) if (out[k] === null) delete out[k];
  return out;
}
