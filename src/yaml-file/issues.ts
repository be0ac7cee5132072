/**
 * Turns zod issues into located, readable problems: `targets[0].wallet: "0xzz" is not an address`.
 * Unknown keys get a "did you mean"; union failures report the branch the user meant.
 */
import type { z } from 'zod';
import type { FileProblem } from './problems.js';
import { formatFieldPath, type FieldPath, type YamlDoc } from './yaml-doc.js';

type Issue = z.core.$ZodIssue;
type AnySchema = z.core.$ZodType;

/** Custom issues carry these in `params`. */
export interface ProblemParams {
  hint?: string;
  /** Do not prefix the message with the value (the message names it already). */
  noValue?: boolean;
  /** Point at the key rather than the value. */
  atKey?: boolean;
}

export function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate within a small edit distance (or the same name in another case/separator). */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = norm(c) === norm(word) ? 0 : levenshtein(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return bestD <= limit ? best : undefined;
}

/** A short, quoted rendering of a value for messages. */
export function reprValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null (empty)';
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v);
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return String(v);
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

function unwrap(schema: AnySchema | undefined): AnySchema | undefined {
  let s = schema;
  for (let i = 0; i < 20 && s; i++) {
    const def = s._zod.def as unknown as Record<string, unknown> & { type: string };
    if (['optional', 'default', 'nullable', 'readonly', 'catch', 'prefault', 'nonoptional'].includes(def.type))
      s = def.innerType as AnySchema;
    else if (def.type === 'pipe') s = def.in as AnySchema;
    else if (def.type === 'lazy') s = (def.getter as () => AnySchema)();
    else return s;
  }
  return s;
}

function defOf(s: AnySchema | undefined): (Record<string, unknown> & { type: string }) | undefined {
  return s?._zod.def as unknown as (Record<string, unknown> & { type: string }) | undefined;
}

/** Schemas that may apply at `path` (several inside unions). */
export function schemasAt(schema: AnySchema, path: FieldPath): AnySchema[] {
  let current: AnySchema[] = [schema];
  for (const seg of path) {
    const next: AnySchema[] = [];
    const expand = (s: AnySchema | undefined) => {
      const u = unwrap(s);
      const def = defOf(u);
      if (!u || !def) return;
      if (def.type === 'union') for (const o of def.options as AnySchema[]) expand(o);
      else if (def.type === 'object' && typeof seg === 'string') {
        const child = (def.shape as Record<string, AnySchema>)[seg];
        if (child) next.push(child);
      } else if (def.type === 'array' && typeof seg === 'number') next.push(def.element as AnySchema);
      else if (def.type === 'record') next.push(def.valueType as AnySchema);
    };
    current.forEach(expand);
    current = next;
  }
  return current;
}

export function keysAt(schema: AnySchema, path: FieldPath): string[] {
  const keys = new Set<string>();
  const collect = (s: AnySchema | undefined) => {
    const u = unwrap(s);
    const def = defOf(u);
    if (!def) return;
    if (def.type === 'union') for (const o of def.options as AnySchema[]) collect(o);
    if (def.type === 'object') for (const k of Object.keys(def.shape as object)) keys.add(k);
  };
  schemasAt(schema, path).forEach(collect);
  return [...keys];
}

/** Every object key of the schema with the paths where it is allowed ("chunk" -> ["range"]). */
function allKeyPaths(schema: AnySchema): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const seen = new Set<AnySchema>();
  const visit = (s: AnySchema | undefined, path: FieldPath) => {
    const u = unwrap(s);
    const def = defOf(u);
    if (!u || !def || seen.has(u)) return;
    seen.add(u);
    if (def.type === 'union') for (const o of def.options as AnySchema[]) visit(o, path);
    if (def.type === 'array') visit(def.element as AnySchema, [...path, 0]);
    if (def.type === 'object') {
      for (const [k, child] of Object.entries(def.shape as Record<string, AnySchema>)) {
        const parent = formatFieldPath(path).replace(/\[0\]/g, '[]') || '(top level)';
        out.set(k, [...(out.get(k) ?? []), parent]);
        visit(child, [...path, k]);
      }
    }
  };
  visit(schema, []);
  return out;
}

function valueAt(root: unknown, path: FieldPath): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

export interface IssueContext {
  doc: YamlDoc;
  schema: AnySchema;
  /** For unions of objects: which branch did the user mean, from the keys present. */
  chooseBranch?: (value: Record<string, unknown>, branches: AnySchema[]) => number | { message: string; hint?: string } | undefined;
}

export function issuesToProblems(issues: readonly Issue[], ctx: IssueContext): FileProblem[] {
  const problems: FileProblem[] = [];
  const keyPaths = allKeyPaths(ctx.schema);
  const add = (path: FieldPath, message: string, hint?: string, atKey = false) => {
    const pos = ctx.doc.locate(path, { key: atKey });
    problems.push({ file: ctx.doc.file, line: pos.line, column: pos.column, field: formatFieldPath(path), message, hint });
  };

  /**
   * zod reports a union's one partly valid branch alone (unknown keys do not stop a branch), so a
   * wallet target listing a chain's dataset is reported as the chain target form with an unknown
   * key "wallet". When the keys written name another branch, that branch's issues are reported.
   */
  const meantBranchIssues = (issue: Issue & { code: 'unrecognized_keys' }, value: unknown, schemaAtBase: AnySchema) => {
    if (!ctx.chooseBranch || value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const branches = schemasAt(schemaAtBase, issue.path as FieldPath)
      .map(unwrap)
      .flatMap((s) => (defOf(s)?.type === 'union' ? (defOf(s)!.options as AnySchema[]) : []));
    const choice = ctx.chooseBranch(value as Record<string, unknown>, branches);
    const branch = typeof choice === 'number' ? branches[choice] : undefined;
    if (!branch || !issue.keys.some((k) => keysAt(branch, []).includes(k))) return undefined;
    const result = (branch as unknown as { safeParse(v: unknown): { error?: { issues: Issue[] } } }).safeParse(value);
    return result.error ? { branch, issues: result.error.issues } : undefined;
  };

  const handle = (issue: Issue, base: FieldPath, schemaAtBase: AnySchema) => {
    const path: FieldPath = [...base, ...(issue.path as (string | number)[])];
    const value = valueAt(ctx.doc.value, path);
    const withValue = (m: string) => `${reprValue(value)} ${m}`;
    switch (issue.code) {
      case 'unrecognized_keys': {
        const meant = meantBranchIssues(issue, value, schemaAtBase);
        if (meant) {
          for (const sub of meant.issues) handle(sub, path, meant.branch);
          return;
        }
        const known = keysAt(schemaAtBase, issue.path as FieldPath);
        for (const key of issue.keys) {
          const close = didYouMean(key, known);
          const elsewhere = keyPaths.get(key)?.filter((p) => p !== (formatFieldPath(path) || '(top level)'));
          let hint: string | undefined;
          if (close) hint = `did you mean "${close}"?`;
          else if (elsewhere?.length) hint = `"${key}" belongs under ${elsewhere.map((p) => `${p}:`).join(' or ')}`;
          else if (known.length) hint = `known keys here: ${known.join(', ')}`;
          if (/secret|client_?id|password|access_?key/i.test(key)) {
            hint =
              'secrets are read only from the environment (INSIGHT_CLIENT_ID, INSIGHT_SECRET_KEY; S3 credentials from the AWS default chain), never from files';
          }
          add([...path, key], `unknown key "${key}"`, hint, true);
        }
        return;
      }
      case 'invalid_union': {
        const branches = schemasAt(schemaAtBase, issue.path as FieldPath)
          .map(unwrap)
          .flatMap((s) => (defOf(s)?.type === 'union' ? (defOf(s)!.options as AnySchema[]) : []));
        if (issue.errors.length === 0) {
          add(path, withValue('matches more than one form'));
          return;
        }
        if (value !== null && typeof value === 'object' && !Array.isArray(value) && ctx.chooseBranch) {
          const choice = ctx.chooseBranch(value as Record<string, unknown>, branches);
          if (typeof choice === 'number' && issue.errors[choice] && branches[choice]) {
            for (const sub of issue.errors[choice]) handle(sub, path, branches[choice]);
            return;
          }
          if (choice && typeof choice === 'object') {
            add(path, choice.message, choice.hint);
            return;
          }
        }
        // Scalars: the branch whose issues are not a plain type mismatch is the one the user meant.
        const meant = issue.errors.findIndex((errs) => errs.some((e) => e.code !== 'invalid_type' || e.path.length > 0));
        if (meant >= 0 && branches[meant]) {
          for (const sub of issue.errors[meant]!) handle(sub, path, branches[meant]);
          return;
        }
        const expected = [
          ...new Set(
            issue.errors.flatMap((errs) =>
              errs.map((e) => (e.code === 'invalid_type' ? (TYPE_NAMES[e.expected] ?? e.expected) : e.message)),
            ),
          ),
        ];
        add(
          path,
          value === undefined ? `is required (${expected.join(' or ')})` : `expected ${expected.join(' or ')}, got ${reprValue(value)}`,
        );
        return;
      }
      case 'invalid_type': {
        if (value === undefined) {
          add(path, `is required (${TYPE_NAMES[issue.expected] ?? issue.expected})`);
          return;
        }
        const node = ctx.doc.nodeAt(path) as { value?: unknown } | undefined;
        if (node && typeof node.value === 'bigint' && !Number.isSafeInteger(Number(node.value))) {
          add(path, `${String(node.value)} is too large to be exact (above 2^53)`, 'quote it if it is meant as text');
          return;
        }
        if (issue.expected === 'int' && typeof value === 'number') {
          add(path, withValue('is not a whole number'));
          return;
        }
        add(path, `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}, got ${reprValue(value)}`);
        return;
      }
      case 'invalid_value': {
        const vals = issue.values.map((v) => JSON.stringify(v));
        const close = typeof value === 'string' ? didYouMean(value, issue.values.map(String)) : undefined;
        add(path, withValue(`is not one of ${vals.join(', ')}`), close ? `did you mean ${JSON.stringify(close)}?` : undefined);
        return;
      }
      case 'too_small': {
        const min = Number(issue.minimum);
        if (issue.origin === 'array') add(path, min <= 1 ? 'must not be empty' : `must have at least ${min} entries`);
        else if (issue.origin === 'string') add(path, 'must not be empty');
        else add(path, withValue(`is too small (minimum ${issue.inclusive === false ? `above ${min}` : min})`));
        return;
      }
      case 'too_big': {
        const max = Number(issue.maximum);
        if (issue.origin === 'array') add(path, `has too many entries (at most ${max})`);
        else if (issue.origin === 'string') add(path, `is too long (at most ${max} characters)`);
        else add(path, withValue(`is too large (maximum ${max})`));
        return;
      }
      case 'custom': {
        const params = (issue.params ?? {}) as ProblemParams;
        add(path, params.noValue ? issue.message : withValue(issue.message), params.hint, params.atKey);
        return;
      }
      case 'invalid_format':
        add(path, withValue(issue.message));
        return;
      default:
        add(path, withValue(issue.message));
    }
  };

  for (const issue of issues) handle(issue, [], ctx.schema);
  // One problem per place and message, in file order.
  const seen = new Set<string>();
  return problems
    .filter((p) => {
      const k = `${p.line}:${p.column}:${p.field}:${p.message}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => a.line - b.line || a.column - b.column);
}
