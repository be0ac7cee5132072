import { InsightExportError } from '../errors.js';

/** An exported data file cannot be read back (verify, the reorganisation check, recount). */
export class ExportedFileError extends InsightExportError {
  override name = 'ExportedFileError';
  constructor(key: string, problem: string) {
    super(problem, {
      details: key,
      hint: 'Export its window again (`insight-export verify` prints the command), or delete the file if no window lists it.',
    });
  }
}

/** A window's commit stopped before an upload because the run is stopping: the window is not completed. */
export class CommitStoppedError extends InsightExportError {
  override name = 'CommitStoppedError';
}

export class StateCorruptError extends InsightExportError {
  override name = 'StateCorruptError';
  constructor(key: string, problem: string) {
    super('A state object at the destination cannot be read', {
      details: `${key}: ${problem}`,
      hint: 'Inspect or delete that object; `insight-export verify` shows what the destination holds.',
    });
  }
}
