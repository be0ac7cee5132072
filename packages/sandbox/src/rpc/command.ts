import { createLogger } from '../../../../src/shared-with-sandbox.js';
import { serveUntilSignalled } from '../serve-until-signalled.js';
import type { ReceiptsMode } from './node.js';
import { startRpcSandbox, type RpcSandbox, type RpcSandboxOptions } from './start.js';

/** The `sandbox` command's flags that matter over RPC (the server flags come from sandboxOptionsFromArgs). */
export interface RpcSandboxArgs {
  rpc?: string[] | undefined;
  abi?: string[] | undefined;
  'poll-ms'?: number | undefined;
  'from-block'?: number | undefined;
  receipts?: string | undefined;
}

export function rpcOptionsFromArgs(args: RpcSandboxArgs): Pick<RpcSandboxOptions, 'rpc' | 'abis' | 'pollMs' | 'fromBlock' | 'receipts'> {
  return {
    rpc: args.rpc ?? [],
    abis: args.abi ?? [],
    pollMs: args['poll-ms'],
    fromBlock: args['from-block'],
    receipts: args.receipts as ReceiptsMode | undefined,
  };
}

/** Starts the sandbox over the nodes, prints its URLs (stdout, `key=value` lines) and follows the nodes until SIGINT/SIGTERM. */
export async function runRpcSandbox(opts: RpcSandboxOptions, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  const logger = opts.logger ?? createLogger({ level: 'info' });
  const sandbox: RpcSandbox = await startRpcSandbox({ ...opts, logger });
  const summary = sandbox.data.chains.map(
    (c) =>
      `# chain ${c.chainId} from ${c.rpcUrl}: blocks ${c.firstBlock ?? '-'}..${c.headBlock ?? '-'}, ${c.transactionCount} transactions, ${c.logCount} logs; ` +
      `following every ${opts.pollMs ?? 1000} ms; Ctrl-C to stop\n`,
  );
  await serveUntilSignalled(sandbox, summary, out);
}
