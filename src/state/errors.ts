import { ExitCode, InsightExportError } from '../errors.js';

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

/**
 * Data files no state names lie where a run would write (the same target's files for the same
 * window, or any of the job's when its state is empty): written beside them, the rows would be
 * there twice. Exit 2: no retry removes them; a person decides (remove-orphan-files, the hint).
 */
export class UnreferencedFilesError extends InsightExportError {
  override name = 'UnreferencedFilesError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
  readonly keys: readonly string[];
  constructor(where: string, keys: readonly string[], remove: string) {
    const shown = keys.slice(0, 5).join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
    super(`${keys.length} data file(s) that no state names lie where ${where} would be written: its rows would be there twice`, {
      details: shown,
      hint: `Left by a crash, a lost _state/ folder or a compaction that lost a race. Remove them, then run again: ${remove} (it deletes only files no completed window, pending commit or Iceberg snapshot names; --dry-run lists them). If they hold rows you need, move them out of the destination first.`,
    });
    this.keys = keys;
  }
}

/** Compaction found a merged file that disagrees with its windows, or a file a window lists is gone: nothing was changed. */
export class CompactionError extends InsightExportError {
  override name = 'CompactionError';
}
