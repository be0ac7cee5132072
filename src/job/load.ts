import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { JobFileError } from './errors.js';
import type { FileProblem } from '../yaml-file/problems.js';
import { didYouMean, issuesToProblems, keysAt, type IssueContext } from '../yaml-file/issues.js';
import { chainNameHint } from './chain-names.js';
import { targetKeyHint } from './key-hints.js';
import { jobFileSchema, type Job } from './schema.js';
import { SETTINGS_SECTIONS } from './settings.js';
import { datasetsFor } from '../datasets/index.js';
import { dropEmptySections, parseYaml, type YamlDoc } from '../yaml-file/yaml-doc.js';

export interface ParseJobOptions {
  /** Directory relative local destinations are resolved from. Default: process.cwd(). */
  cwd?: string;
  /**
   * `run --from/--to`: range points that replace the file's, validated by the job's own schema as
   * if written in the file (problems name the flag).
   */
  range?: RangeOverride;
}

export interface RangeOverride {
  from?: number | string | undefined;
  to?: number | string | undefined;
}

/** The document with the overridden range points written in. */
function withRange(value: object, range: RangeOverride | undefined): object {
  if (!range || (range.from === undefined && range.to === undefined)) return value;
  const current = (value as { range?: unknown }).range;
  const base = current && typeof current === 'object' && !Array.isArray(current) ? current : {};
  const points = Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined));
  return { ...value, range: { ...base, ...points } };
}

/** Problems of a point the flag gave name the flag, not only the file's line. */
function nameFlags(problems: FileProblem[], range: RangeOverride | undefined): FileProblem[] {
  if (!range) return problems;
  return problems.map((p) => {
    const point = (['from', 'to'] as const).find((k) => range[k] !== undefined && p.field === `range.${k}`);
    return point ? { ...p, field: `range.${point} (--${point} ${JSON.stringify(range[point])})` } : p;
  });
}

/**
 * Top-level `x-` keys are the file's own (blocks to anchor and merge elsewhere, as in
 * docker-compose files): the job ignores them.
 */
function withoutExtensionKeys(value: object): object {
  const keys = Object.keys(value);
  if (!keys.some((k) => k.startsWith('x-'))) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !k.startsWith('x-')));
}

/** Picks the target form the user meant from the keys written, so errors speak about that form. */
const chooseTargetForm: NonNullable<IssueContext['chooseBranch']> = (value, branches) => {
  const keys = Object.keys(value);
  const branchKeys = branches.map((b) => new Set(keysAt(b, [])));
  const owners = new Set<number>();
  for (const k of keys) {
    const inBranches = branchKeys.flatMap((s, i) => (s.has(k) ? [i] : []));
    if (inBranches.length === 1) owners.add(inBranches[0]!);
  }
  if (owners.size === 1) return [...owners][0];
  if ('wallet' in value && 'contract' in value) {
    return { message: 'has both "wallet" and "contract"', hint: 'a target is either a wallet or a contract: make them two targets' };
  }
  const close = keys.map((k) => didYouMean(k, ['wallet', 'contract'])).find((k) => k !== undefined);
  return {
    message: `needs "wallet:" (an address or name) or "contract:" (an address with events:), or only datasets of the chains themselves (${datasetsFor('chain').join(', ')})`,
    hint: close ? `did you mean "${close}"?` : undefined,
  };
};

function fail(problems: FileProblem[]): never {
  throw new JobFileError(problems);
}

function parseDoc(doc: YamlDoc, fileName: string, opts: ParseJobOptions): Job {
  if (doc.syntaxProblems.length) fail(doc.syntaxProblems);
  if (doc.value === undefined || doc.value === null) {
    fail([{ file: fileName, line: 1, column: 1, field: '', message: 'the job file is empty', hint: 'see jobs/demo.yaml for an example' }]);
  }
  if (typeof doc.value !== 'object' || Array.isArray(doc.value)) {
    const pos = doc.locate([]);
    fail([
      { file: fileName, ...pos, field: '', message: 'expected a mapping of job settings (name:, source:, targets:, range:, output: ...)' },
    ]);
  }
  const schema = jobFileSchema({
    cwd: opts.cwd ?? process.cwd(),
    jobDir: path.dirname(path.resolve(opts.cwd ?? process.cwd(), fileName)),
    jobFile: fileName,
    locate: (p) => doc.locate(p),
  });
  const value = withRange(withoutExtensionKeys(doc.value), opts.range);
  const result = schema.safeParse(dropEmptySections(value, ['aggregates', 'filters', ...SETTINGS_SECTIONS]));
  // Messages echo the value checked: the flag's where it replaced the file's (locations stay the file's).
  const checkedDoc = value === doc.value ? doc : (Object.create(doc, { value: { value } }) as YamlDoc);
  if (!result.success)
    fail(
      nameFlags(
        issuesToProblems(result.error.issues, {
          doc: checkedDoc,
          schema,
          chooseBranch: chooseTargetForm,
          typeHint: chainNameHint,
          keyHint: targetKeyHint,
        }),
        opts.range,
      ),
    );
  return result.data;
}

/** Parses and validates job text (YAML or JSON). `fileName` is used in messages and for relative ABI paths. */
export function parseJob(text: string, fileName: string, opts: ParseJobOptions = {}): Job {
  return parseDoc(parseYaml(text, fileName), fileName, opts);
}

/** Reads, parses and validates a job file, and checks the ABI files it names. */
export async function loadJob(file: string, opts: ParseJobOptions = {}): Promise<Job> {
  let text: string;
  try {
    text = await readFile(path.resolve(opts.cwd ?? process.cwd(), file), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    fail([
      { file, line: 1, column: 1, field: '', message: code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? String(err)})` },
    ]);
  }
  const doc = parseYaml(text, file);
  const job = parseDoc(doc, file, opts);
  const problems: FileProblem[] = [];
  for (const t of job.targets) {
    if (t.kind !== 'contract' || !t.abi) continue;
    const where = ['targets', t.index, 'abi'];
    const problem = await checkAbiFile(t.abi);
    if (problem) problems.push({ file, ...doc.locate(where), field: `targets[${t.index}].abi`, message: problem });
  }
  if (problems.length) fail(problems);
  return job;
}

async function checkAbiFile(abs: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch {
    return `ABI file ${abs} cannot be read`;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    const abi = Array.isArray(parsed) ? parsed : (parsed as { abi?: unknown }).abi;
    if (!Array.isArray(abi)) return `${abs} is not a JSON ABI (a list of items, or an object with "abi")`;
  } catch (err) {
    return `${abs} is not JSON (${(err as Error).message})`;
  }
  return undefined;
}
