import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Every dataset module's row builder (`toRow`) is type-checked against its column declaration:
 * the real modules compile, and the same modules with one column of their row literal misspelt,
 * left out or added do not. The modules are compiled by the TypeScript compiler with the project's
 * settings; each changed text is given to the compiler as a copy of the module beside it, all in one
 * program.
 */

const root = path.join(import.meta.dirname, '..', '..');
const datasetsDir = path.join(root, 'src', 'datasets');
/** The start of a row builder's body. */
const TO_ROW = /^\s+toRow\([^)]*\)[^;]*\{$/;
/** Every module of src/datasets that builds rows. */
const datasetFiles = readdirSync(datasetsDir)
  .filter(
    (f) =>
      f.endsWith('.ts') &&
      readFileSync(path.join(datasetsDir, f), 'utf8')
        .split('\n')
        .some((l) => TO_ROW.test(l)),
  )
  .map((f) => path.join(datasetsDir, f));

/** Every row has chain_id; the change is made to its line in the row builder. */
const COLUMN = 'chain_id';

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  },
)!;

interface Change {
  /** What the changed module says in place of the column's line. */
  replace: (line: string) => string;
  /** The compiler's message must contain this. */
  message: RegExp;
  /** Where the error is, from the column's line; null: on the row literal, wherever it starts. */
  errorLine: 0 | 1 | null;
}

const CHANGES: Record<'misspelt' | 'missing' | 'extra', Change> = {
  misspelt: { replace: (line) => line.replace(`${COLUMN}:`, 'chian_id:'), message: /'chian_id' does not exist/, errorLine: 0 },
  missing: { replace: () => '', message: new RegExp(`Property '${COLUMN}' is missing`), errorLine: null },
  extra: { replace: (line) => `${line}\n      chain_name: 'x',`, message: /'chain_name' does not exist/, errorLine: 1 },
};

/** The column's line in the module's row builder: its 1-based line number and text. */
function columnLine(text: string): { line: number; text: string } {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => TO_ROW.test(l));
  const at = lines.findIndex((l, i) => i > start && new RegExp(`^\\s+${COLUMN}: `).test(l));
  if (start < 0 || at < 0) throw new Error(`no "${COLUMN}:" line in a toRow`);
  return { line: at + 1, text: lines[at]! };
}

/** The copy of a dataset module with `kind`'s change: beside the module, so that its imports resolve alike. */
const changedPath = (file: string, kind: string) => file.replace(/\.ts$/, `.${kind}-changed.ts`);

interface Compiled {
  program: ts.Program;
  /** The column's line in each dataset module. */
  lines: Map<string, number>;
}

let compiled: Compiled | undefined;

/**
 * One program holds the dataset modules as written and, beside each, one changed copy per kind of
 * change (nothing imports the copies, so each copy's errors are its own): the compiler checks the
 * shared imports once instead of once per kind.
 */
function compile(): Compiled {
  if (compiled) return compiled;
  const lines = new Map<string, number>();
  const changed = new Map<string, string>();
  for (const file of datasetFiles) {
    const text = readFileSync(file, 'utf8');
    const found = columnLine(text);
    lines.set(file, found.line);
    for (const [kind, change] of Object.entries(CHANGES)) {
      const all = text.split('\n');
      all[found.line - 1] = change.replace(found.text);
      changed.set(changedPath(file, kind), all.join('\n'));
    }
  }
  const host = ts.createCompilerHost(config.options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => changed.has(path.resolve(fileName)) || fileExists(fileName);
  host.getSourceFile = (fileName, language, onError, shouldCreate) => {
    const text = changed.get(path.resolve(fileName));
    return text === undefined ? getSourceFile(fileName, language, onError, shouldCreate) : ts.createSourceFile(fileName, text, language);
  };
  const program = ts.createProgram({ rootNames: [...datasetFiles, ...changed.keys()], options: { ...config.options, noEmit: true }, host });
  compiled = { program, lines };
  return compiled;
}

/** The errors the compiler reports in each dataset module as written (kind null) or in its copy with `kind`'s change. */
function errorsOf(kind: string | null): Map<string, { line: number; message: string }[]> {
  const { program } = compile();
  const out = new Map<string, { line: number; message: string }[]>();
  for (const file of datasetFiles) {
    const source = program.getSourceFile(kind === null ? file : changedPath(file, kind))!;
    out.set(
      file,
      [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => ({
        line: source.getLineAndCharacterOfPosition(d.start ?? 0).line + 1,
        message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
      })),
    );
  }
  return out;
}

describe('a row builder of a dataset', () => {
  beforeAll(() => {
    expect(datasetFiles.map((f) => path.basename(f))).toEqual(
      expect.arrayContaining(['transactions.ts', 'events.ts', 'aggregates.ts', 'nft-holdings.ts']),
    );
  });

  it('type-checks as written', () => {
    for (const [file, errors] of errorsOf(null)) expect(errors, path.basename(file)).toEqual([]);
  }, 120_000);

  for (const [kind, change] of Object.entries(CHANGES)) {
    it(`fails the type check when a column is ${kind}, in every dataset module`, () => {
      const { lines } = compile();
      for (const [file, errors] of errorsOf(kind)) {
        const name = path.basename(file);
        expect(errors.length, `${name}: ${JSON.stringify(errors)}`).toBeGreaterThan(0);
        expect(
          errors.some((e) => change.message.test(e.message)),
          `${name}: ${JSON.stringify(errors)}`,
        ).toBe(true);
        if (change.errorLine !== null)
          expect(
            errors.map((e) => e.line),
            name,
          ).toContain(lines.get(file)! + change.errorLine);
      }
    }, 120_000);
  }
});
