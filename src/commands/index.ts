import type { CommandModule } from 'yargs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command is typed by its own arguments; yargs takes the mixed list
type AnyCommand = CommandModule<any, any>;
type SetExit = (code: number) => void;

/**
 * Every command by its name, each loaded on demand: a command's module pulls in what it runs
 * (DuckDB, the AWS SDK, viem ...), and a process that runs one command should not pay for all.
 */
const COMMANDS: Record<string, (setExit: SetExit, argv: readonly string[]) => Promise<AnyCommand>> = {
  run: async (setExit, argv) => (await import('./run.js')).runCommand(setExit, argv),
  plan: async () => (await import('./plan.js')).planCommand,
  validate: async (setExit) => (await import('./validate.js')).validateCommand(setExit),
  verify: async (setExit) => (await import('./verify.js')).verifyCommand(setExit),
  resolve: async () => (await import('./resolve.js')).resolveCommand,
  decode: async () => (await import('./decode.js')).decodeCommand,
  nfts: async () => (await import('./nfts.js')).nftsCommand,
  sandbox: async () => (await import('./sandbox.js')).sandboxCommand(),
  ddl: async () => (await import('./ddl.js')).ddlCommand,
  compact: async () => (await import('./compact.js')).compactCommand,
  'expire-snapshots': async () => (await import('./expire-snapshots.js')).expireSnapshotsCommand,
  'remove-orphan-files': async () => (await import('./remove-orphan-files.js')).removeOrphanFilesCommand,
  release: async () => (await import('./release.js')).releaseCommand,
  rename: async () => (await import('./rename.js')).renameCommand,
  retire: async () => (await import('./retire.js')).retireCommand,
  config: async () => (await import('./config.js')).configCommand,
};

/**
 * The commands to give the parser: only the one named by the first argument when it names one,
 * else all of them (--help, a typo to suggest a command for, options before the command).
 */
export async function commands(setExit: SetExit, argv: readonly string[] = []): Promise<AnyCommand[]> {
  const first = argv[0];
  const names = first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
  return Promise.all(names.map((name) => COMMANDS[name]!(setExit, argv)));
}
