/**
 * The sandbox over real chains: the read interface served from blocks, receipts and logs loaded
 * from JSON-RPC nodes (anvil, hardhat, any EVM node), following new and reorganised blocks.
 */
export { startRpcSandbox } from './start.js';
export type { RpcSandbox, RpcSandboxOptions } from './start.js';
export { RpcSandboxData } from './data.js';
export type { RpcChainInfo } from './data.js';
export { ChainStore, RPC_EVENT_COLUMNS, RPC_TRANSACTION_COLUMNS } from './store.js';
export type { Holdings, TokenInfo } from './store.js';
export { ChainFollower } from './follower.js';
export type { FollowOptions, SyncResult } from './follower.js';
export { RpcNode, isMethodUnsupported } from './node.js';
export type { ReceiptsMode, RpcNodeOptions } from './node.js';
export { AbiRegistry, STANDARD_ABIS, loadUserAbis } from './registry.js';
export type { UserAbi } from './registry.js';
export { blockRecord, eventRecord, functionSelector, loadedBlock, transactionRecord } from './convert.js';
export type { LoadedBlock, RpcBlock, RpcLog, RpcReceipt, RpcTransaction } from './convert.js';
export { RpcNodeError } from './errors.js';
export { rpcOptionsFromArgs, runRpcSandbox } from './command.js';
export type { RpcSandboxArgs } from './command.js';
