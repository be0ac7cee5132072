/**
 * The sandbox: a local server of the read interface (../shared/reference/read-interface.md) over a
 * deterministic, seeded multi-chain data set, with latency, rate limits and injected faults.
 */
export { serveReadInterface, startSandbox } from './server.js';
export { SANDBOX_PROFILES, profileOptions } from './profiles.js';
export type { SandboxProfile } from './profiles.js';
export type { FaultKind, FaultOptions, Sandbox, SandboxOptions, SandboxRoute, SandboxServer, SandboxStats } from './server.js';
export { buildSandboxData } from './data.js';
export type { ListOptions, ListResult, NftPageParams, ReadInterfaceSource, SandboxData } from './data.js';
export type { ChainInfo, ContractInfo, EncodedArgs, NftHolding, NftTokenHolding, WalletInfo } from './dataset.js';
export { EVENT_COLUMNS, TRANSACTION_COLUMNS } from './dataset.js';
export { listQuery, parseListQuery, MAX_PAGE, MAX_PAGE_AGGREGATE, MAX_LIMIT, DEFAULT_LIMIT, MAX_CHAIN_IDS } from './query.js';
export type { ListQuery, Filter, FilterOp, GroupExpr, AggregateExpr } from './query.js';
export { SandboxHttpError, SandboxOptionsError } from './errors.js';
export {
  ERC20_ABI,
  ERC721_ABI,
  ERC1155_ABI,
  UNKNOWN_ABI,
  TOPIC0,
  SELECTOR,
  CANONICAL,
  parseEventSignature,
} from './abi.js';
export type { ContractKind } from './abi.js';
