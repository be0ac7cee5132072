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
  Parser,
  type Document,
  type Node,
  type Pair,
  type ParsedNode,
} from 'yaml';
import type { FileProblem } from './problems.js';

export type FieldPath = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

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

/** `targets[0].wallet` */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
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

/** Syntax errors reported per file (see parseYaml). */
const MAX_SYNTAX_PROBLEMS = 20;
/** Collections nested deeper than this are refused before the document is composed (see parseYaml). */
const MAX_NESTING = 100;

export function parseYaml(text: string, file: string): YamlDoc {
  // yaml 2.x (on Node 20's V8) kills the process with "RegExpCompiler Allocation failed" when a
  // second document nested ~1000 levels deep is composed in the same process (`validate a b`):
  // such nesting is refused first, from the syntax tree alone (which handles it fine).
  const tooDeep = nestedTooDeep(text, MAX_NESTING);
  if (tooDeep !== undefined) {
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
  const lineCounter = new LineCounter();
  const doc: Document.Parsed = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
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

  const walk = (
    path: FieldPath,
  ): { node: Node | null | undefined; keyNode?: Node | undefined; parent: Node | null | undefined; found: boolean } => {
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
  };

  const start = (n: Node | null | undefined): number | undefined => (n as ParsedNode | null | undefined)?.range?.[0];

  const locate = (path: FieldPath, opts: { key?: boolean } = {}): Position => {
    const w = walk(path);
    const offset = w.found ? (opts.key ? (start(w.keyNode) ?? start(w.node)) : (start(w.node) ?? start(w.keyNode))) : start(w.node);
    return posOf(offset ?? 0);
  };

  const nodeAt = (path: FieldPath): Node | undefined => {
    const w = walk(path);
    return w.found ? (w.node ?? undefined) : undefined;
  };

  /**
   * Field to name for a syntax error at `offset`: the innermost pair whose key or value covers it
   * when the error is at that key (duplicate keys), else its parent (the collection whose
   * layout is broken), since a broken line is often read as part of the value before it.
   */
  const fieldAt = (offset: number, exact: boolean): string => {
    let best: FieldPath = [];
    let atKey = false;
    const visit = (node: unknown, path: FieldPath) => {
      if (isMap(node)) {
        for (const it of node.items) {
          const key = isScalar(it.key) ? String(it.key.value) : String(it.key);
          const keyStart = start(it.key as Node) ?? Number.POSITIVE_INFINITY;
          const value = it.value as ParsedNode | null;
          const end = value?.range?.[2] ?? (it.key as ParsedNode | null)?.range?.[2] ?? -1;
          if (keyStart <= offset && offset <= end) {
            best = [...path, key];
            atKey = keyStart === offset;
            visit(value, best);
          }
        }
      } else if (isSeq(node)) {
        node.items.forEach((it, i) => {
          const r = (it as ParsedNode).range;
          if (r && r[0] <= offset && offset <= r[2]) {
            best = [...path, i];
            atKey = false;
            visit(it, best);
          }
        });
      }
    };
    visit(doc.contents, []);
    return formatFieldPath(exact || atKey || best.length <= 1 ? best : best.slice(0, -1));
  };

  // A few syntax errors locate the problem; thousands (deeply nested junk) cost time and memory
  // without telling more: the first ones are reported, the rest counted.
  const shown = doc.errors.slice(0, MAX_SYNTAX_PROBLEMS);
  const syntaxProblems: FileProblem[] = shown.map((e) => {
    // The parser notices an unclosed [ { or quote where it gives up; point at where it opened.
    const opened = /Flow (sequence|mapping)|Missing closing/.test(e.message) ? unclosedBefore(text, e.pos[0]) : undefined;
    const at = opened ?? e.pos[0];
    const pos = posOf(at);
    return {
      file,
      line: pos.line,
      column: pos.column,
      field: fieldAt(at, opened !== undefined),
      message: `YAML syntax error: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
    };
  });

  if (doc.errors.length > shown.length) {
    const next = posOf(doc.errors[shown.length]!.pos[0]);
    syntaxProblems.push({
      file,
      line: next.line,
      column: next.column,
      field: '',
      message: `and ${doc.errors.length - shown.length} more YAML syntax errors`,
    });
  }

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

/** Offset of the first collection nested deeper than `max` (block or flow), from yaml's syntax tree; undefined if none. */
function nestedTooDeep(text: string, max: number): number | undefined {
  type Tok = { type?: string; offset?: number; value?: unknown; key?: unknown; items?: { key?: unknown; value?: unknown }[] };
  const nesting = new Set(['block-seq', 'block-map', 'flow-collection']);
  for (const doc of new Parser().parse(text)) {
    const stack: [Tok | undefined, number][] = [[(doc as Tok).value as Tok | undefined, 0]];
    while (stack.length > 0) {
      const [tok, outer] = stack.pop()!;
      if (!tok || typeof tok !== 'object') continue;
      const depth = outer + (nesting.has(tok.type ?? '') ? 1 : 0);
      if (depth > max) return tok.offset ?? 0;
      if (tok.value && typeof tok.value === 'object') stack.push([tok.value as Tok, depth]);
      for (const it of tok.items ?? []) {
        if (it.key && typeof it.key === 'object') stack.push([it.key as Tok, depth]);
        if (it.value && typeof it.value === 'object') stack.push([it.value as Tok, depth]);
      }
    }
  }
  return undefined;
}

/** Offset of the last bracket or quote still open at `end` (YAML flow syntax, roughly), if any. */
function unclosedBefore(text: string, end: number): number | undefined {
  const stack: number[] = [];
  let quote: { ch: string; at: number } | undefined;
  for (let i = 0; i < Math.min(end, text.length); i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\' && quote.ch === '"') i++;
      else if (ch === quote.ch) quote = undefined;
      continue;
    }
    if (ch === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i < end && text[i] !== '\n') i++;
    } else if ((ch === '"' || ch === "'") && (i === 0 || /[\s:,[{-]/.test(text[i - 1]!))) quote = { ch, at: i };
    else if (ch === '[' || ch === '{') stack.push(i);
    else if (ch === ']' || ch === '}') stack.pop();
  }
  return quote?.at ?? stack[stack.length - 1];
}
