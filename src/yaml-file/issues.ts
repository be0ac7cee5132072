/**
 * Turns zod issues into located, readable problems: `targets[0].wallet: "0xzz" is not an address`.
 * Unknown keys get a "did you mean"; union failures report the branch the user meant.
 */
import type { z } from 'zod';
import { didYouMean } from './did-you-mean.js';
import type { FileProblem } from './problems.js';
import { allKeyPaths, keysAt, unionBranches, type AnySchema } from './schema-paths.js';
import { formatFieldPath, type FieldPath, type YamlDoc } from './yaml-doc.js';

export { didYouMean, levenshtein } from './did-you-mean.js';
export { keysAt, schemasAt } from './schema-paths.js';

type Issue = z.core.$ZodIssue;

/** Custom issues carry these in `params`. */
export interface ProblemParams {
  hint?: string;
  /** Do not prefix the message with the value (the message names it already). */
  noValue?: boolean;
  /** Point at the key rather than the value. */
  atKey?: boolean;
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
  /** A hint for a value of the wrong type at a place (e.g. a chain's name where its id belongs). */
  typeHint?: (path: FieldPath, value: unknown) => string | undefined;
  /** A hint for an unknown key at a place (where it belongs instead), before the generic ones. */
  keyHint?: (path: FieldPath, key: string, value: unknown) => string | undefined;
}

/** What every issue's handling shares: the file, where each key belongs, and the problems found so far. */
interface Reporter {
  ctx: IssueContext;
  keyPaths: Map<string, string[]>;
  add: (path: FieldPath, message: string, hint?: string, atKey?: boolean) => void;
}

/** One issue at `base` (inside the schema `schemaAtBase`) as problems: by its code, with the value found at its path. */
function handle(r: Reporter, issue: Issue, base: FieldPath, schemaAtBase: AnySchema): void {
  const path: FieldPath = [...base, ...(issue.path as (string | number)[])];
  const value = valueAt(r.ctx.doc.value, path);
  const withValue = (m: string) => `${reprValue(value)} ${m}`;
  switch (issue.code) {
    case 'unrecognized_keys':
      return unknownKeys(r, issue, path, value, schemaAtBase);
    case 'invalid_union':
      return unionMismatch(r, issue, path, value, schemaAtBase);
    case 'invalid_type':
      return typeMismatch(r, issue, path, value);
    case 'invalid_value': {
      const vals = issue.values.map((v) => JSON.stringify(v));
      const close = typeof value === 'string' ? didYouMean(value, issue.values.map(String)) : undefined;
      r.add(path, withValue(`is not one of ${vals.join(', ')}`), close ? `did you mean ${JSON.stringify(close)}?` : undefined);
      return;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'array') r.add(path, min <= 1 ? 'must not be empty' : `must have at least ${min} entries`);
      else if (issue.origin === 'string') r.add(path, 'must not be empty');
      else r.add(path, withValue(`is too small (minimum ${issue.inclusive === false ? `above ${min}` : min})`));
      return;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'array') r.add(path, `has too many entries (at most ${max})`);
      else if (issue.origin === 'string') r.add(path, `is too long (at most ${max} characters)`);
      else r.add(path, withValue(`is too large (maximum ${max})`));
      return;
    }
    case 'custom': {
      const params = (issue.params ?? {}) as ProblemParams;
      r.add(path, params.noValue ? issue.message : withValue(issue.message), params.hint, params.atKey);
      return;
    }
    case 'invalid_format':
      r.add(path, withValue(issue.message));
      return;
    default:
      r.add(path, withValue(issue.message));
  }
}

/**
 * zod reports a union's one partly valid branch alone (unknown keys do not stop a branch), so a
 * wallet target listing a chain's dataset is reported as the chain target form with an unknown
 * key "wallet". When the keys written name another branch, that branch's issues are reported.
 */
function meantBranchIssues(r: Reporter, issue: Issue & { code: 'unrecognized_keys' }, value: unknown, schemaAtBase: AnySchema) {
  if (!r.ctx.chooseBranch || value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const branches = unionBranches(schemaAtBase, issue.path as FieldPath);
  const choice = r.ctx.chooseBranch(value as Record<string, unknown>, branches);
  const branch = typeof choice === 'number' ? branches[choice] : undefined;
  if (!branch || !issue.keys.some((k) => keysAt(branch, []).includes(k))) return undefined;
  const result = (branch as unknown as { safeParse(v: unknown): { error?: { issues: Issue[] } } }).safeParse(value);
  return result.error ? { branch, issues: result.error.issues } : undefined;
}

/** Unknown keys: each with a "did you mean", where it belongs instead, or the keys known here (never a secret's). */
function unknownKeys(r: Reporter, issue: Issue & { code: 'unrecognized_keys' }, path: FieldPath, value: unknown, schemaAtBase: AnySchema) {
  const meant = meantBranchIssues(r, issue, value, schemaAtBase);
  if (meant) {
    for (const sub of meant.issues) handle(r, sub, path, meant.branch);
    return;
  }
  const known = keysAt(schemaAtBase, issue.path as FieldPath);
  const here = formatFieldPath(path).replace(/\[\d+\]/g, '[]') || '(top level)';
  for (const key of issue.keys) {
    // A key another form of this place takes is not a typo of itself.
    const close = didYouMean(
      key,
      known.filter((k) => k !== key),
    );
    const elsewhere = r.keyPaths.get(key)?.filter((p) => p !== here);
    let hint: string | undefined = r.ctx.keyHint?.(path, key, value);
    if (hint === undefined && close) hint = `did you mean "${close}"?`;
    else if (hint === undefined && elsewhere?.length) hint = `"${key}" belongs under ${elsewhere.map((p) => `${p}:`).join(' or ')}`;
    else if (hint === undefined && known.length) hint = `known keys here: ${known.join(', ')}`;
    if (/secret|client_?id|password|access_?key/i.test(key)) {
      hint =
        'secrets are read only from the environment (INSIGHT_CLIENT_ID, INSIGHT_SECRET_KEY; S3 credentials from the AWS default chain), never from files';
    }
    r.add([...path, key], `unknown key "${key}"`, hint, true);
  }
}

/** A value no form of a union takes: the issues of the form the user meant, or the forms expected. */
function unionMismatch(r: Reporter, issue: Issue & { code: 'invalid_union' }, path: FieldPath, value: unknown, schemaAtBase: AnySchema) {
  const branches = unionBranches(schemaAtBase, issue.path as FieldPath);
  if (issue.errors.length === 0) {
    r.add(path, `${reprValue(value)} matches more than one form`);
    return;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && r.ctx.chooseBranch) {
    const choice = r.ctx.chooseBranch(value as Record<string, unknown>, branches);
    if (typeof choice === 'number' && issue.errors[choice] && branches[choice]) {
      for (const sub of issue.errors[choice]) handle(r, sub, path, branches[choice]);
      return;
    }
    if (choice && typeof choice === 'object') {
      r.add(path, choice.message, choice.hint);
      return;
    }
  }
  // Scalars: the branch whose issues are not a plain type mismatch is the one the user meant.
  const meant = issue.errors.findIndex((errs) => errs.some((e) => e.code !== 'invalid_type' || e.path.length > 0));
  if (meant >= 0 && branches[meant]) {
    for (const sub of issue.errors[meant]!) handle(r, sub, path, branches[meant]);
    return;
  }
  const expected = [
    ...new Set(
      issue.errors.flatMap((errs) => errs.map((e) => (e.code === 'invalid_type' ? (TYPE_NAMES[e.expected] ?? e.expected) : e.message))),
    ),
  ];
  r.add(
    path,
    value === undefined ? `is required (${expected.join(' or ')})` : `expected ${expected.join(' or ')}, got ${reprValue(value)}`,
  );
}

/** A value of the wrong type: missing, a number too large to be exact, a fraction where a whole number goes. */
function typeMismatch(r: Reporter, issue: Issue & { code: 'invalid_type' }, path: FieldPath, value: unknown) {
  if (value === undefined) {
    r.add(path, `is required (${TYPE_NAMES[issue.expected] ?? issue.expected})`);
    return;
  }
  const node = r.ctx.doc.nodeAt(path) as { value?: unknown } | undefined;
  if (node && typeof node.value === 'bigint' && !Number.isSafeInteger(Number(node.value))) {
    r.add(path, `${String(node.value)} is too large to be exact (above 2^53)`, 'quote it if it is meant as text');
    return;
  }
  if (issue.expected === 'int' && typeof value === 'number') {
    r.add(path, `${reprValue(value)} is not a whole number`);
    return;
  }
  r.add(path, `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}, got ${reprValue(value)}`, r.ctx.typeHint?.(path, value));
}

export function issuesToProblems(issues: readonly Issue[], ctx: IssueContext): FileProblem[] {
  const problems: FileProblem[] = [];
  const add = (path: FieldPath, message: string, hint?: string, atKey = false) => {
    const pos = ctx.doc.locate(path, { key: atKey });
    problems.push({ file: ctx.doc.file, line: pos.line, column: pos.column, field: formatFieldPath(path), message, hint });
  };
  const reporter: Reporter = { ctx, keyPaths: allKeyPaths(ctx.schema), add };
  for (const issue of issues) handle(reporter, issue, [], ctx.schema);
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
