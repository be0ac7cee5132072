import type { CommandModule } from 'yargs';
import { sandboxCommand } from '../sandbox/command.js';
import { compactCommand } from './compact.js';
import { configCommand } from './config.js';
import { ddlCommand } from './ddl.js';
import { decodeCommand } from './decode.js';
import { nftsCommand } from './nfts.js';
import { planCommand } from './plan.js';
import { resolveCommand } from './resolve.js';
import { runCommand } from './run.js';
import { validateCommand } from './validate.js';
import { verifyCommand } from './verify.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command is typed by its own arguments; yargs takes the mixed list
export function commands(setExit: (code: number) => void): CommandModule<any, any>[] {
  return [runCommand(setExit), planCommand, validateCommand, verifyCommand(setExit), resolveCommand, decodeCommand, nftsCommand, sandboxCommand, ddlCommand, compactCommand, configCommand];
}
