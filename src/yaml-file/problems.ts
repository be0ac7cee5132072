import { UserInputError } from '../errors.js';

/** One thing wrong in a job or config file, located to the character. */
export interface FileProblem {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** Field path as written in the file: `targets[0].wallet`; "" when the whole file is concerned. */
  field: string;
  /** Reads after the field: `"0xzz" is not an address (0x + 40 hex digits)`. */
  message: string;
  hint?: string | undefined;
}

/** `jobs/x.yaml:12:5 targets[0].wallet: "0xzz" is not an address (0x + 40 hex digits)` */
export function formatProblem(p: FileProblem): string {
  return `${p.file}:${p.line}:${p.column} ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

function problemLines(problems: FileProblem[]): string[] {
  return problems.flatMap((p) => (p.hint ? [formatProblem(p), `    hint: ${p.hint}`] : [formatProblem(p)]));
}

/** Base of JobFileError and ConfigFileError: several problems reported together, first one located on the error itself. */
export class FileProblemsError extends UserInputError {
  override name = 'FileProblemsError';
  readonly problems: FileProblem[];
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly field: string;

  constructor(problems: FileProblem[], what: string) {
    const first = problems[0];
    if (!first) throw new Error('FileProblemsError needs at least one problem');
    const single = problems.length === 1;
    super(single ? formatProblem(first) : `${first.file}: ${problems.length} problems in the ${what}`, {
      metaMessages: single ? [] : problemLines(problems),
      hint: single ? first.hint : undefined,
    });
    this.problems = problems;
    this.file = first.file;
    this.line = first.line;
    this.column = first.column;
    this.field = first.field;
  }
}
