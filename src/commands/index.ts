import type { CommandModule } from 'yargs';
import { sandboxCommand } from '../sandbox/command.js';
import { planCommand } from './plan.js';
import { runCommand } from './run.js';
import { validateCommand } from './validate.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function commands(setExit: (code: number) => void): CommandModule<any, any>[] {
  return [runCommand(setExit), planCommand, validateCommand, sandboxCommand];
}
