import { InsightExportError } from '../errors.js';

export class StateCorruptError extends InsightExportError {
  override name = 'StateCorruptError';
  constructor(key: string, problem: string) {
    super('A state object at the destination cannot be read', {
      details: `${key}: ${problem}`,
      hint: 'Inspect or delete that object; `insight-export verify` shows what the destination holds.',
    });
  }
}
