/**
 * A YAML file's syntax errors, each located by line, column and the field it breaks, and the
 * nesting refused before a document is composed.
 */
import { isMap, isScalar, isSeq, Parser, type Document, type Node, type ParsedNode } from 'yaml';
import type { FileProblem } from './problems.js';
import { formatFieldPath, type FieldPath, type Position } from './field-path.js';

/** Syntax errors reported per file (see parseYaml). */
const MAX_SYNTAX_PROBLEMS = 20;

const start = (n: Node | null | undefined): number | undefined => (n as ParsedNode | null | undefined)?.range?.[0];

/**
 * Field to name for a syntax error at `offset`: the innermost pair whose key or value covers it
 * when the error is at that key (duplicate keys), else its parent (the collection whose
 * layout is broken), since a broken line is often read as part of the value before it.
 */
function fieldAt(doc: Document.Parsed, offset: number, exact: boolean): string {
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
}

/** The document's syntax errors as problems of `file` (the first few, then how many more). */
export function syntaxProblemsOf(doc: Document.Parsed, text: string, file: string, posOf: (offset: number) => Position): FileProblem[] {
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
      field: fieldAt(doc, at, opened !== undefined),
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
  return syntaxProblems;
}

/** Offset of the first collection nested deeper than `max` (block or flow), from yaml's syntax tree; undefined if none. */
export function nestedTooDeep(text: string, max: number): number | undefined {
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
