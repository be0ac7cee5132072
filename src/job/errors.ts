import { FileProblemsError, type FileProblem } from '../yaml-file/problems.js';

/** A job file that cannot be read or is not valid; every problem names file:line:column and field. */
export class JobFileError extends FileProblemsError {
  override name = 'JobFileError';
  constructor(problems: FileProblem[]) {
    super(problems, 'job file');
  }
}
