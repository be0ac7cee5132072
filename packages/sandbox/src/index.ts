/**
 * The sandbox: a local server of the read interface over a
 * deterministic, seeded multi-chain data set, with latency, rate limits and injected faults.
 */
export { serveReadInterface, startSandbox } from './server.js';
export type { FaultKind, FaultOptions, Sandbox, SandboxOptions, SandboxRoute, SandboxServer, SandboxStats } from './server.js';
export { buildSandboxData } from './data.js';
export { sandboxBanner } from './banner.js';
// The Iceberg REST catalog served at /iceberg (sandbox.catalog).
export { CATALOG_ROOT } from './catalog/catalog-server.js';
export type { CatalogAuthOptions, CatalogExchange, CatalogOptions, CommitFaultStatus, SandboxCatalog } from './catalog/catalog-options.js';
export { SANDBOX_PROFILES, SANDBOX_PROFILE_NAMES, profileOptions, withProfile } from './profiles.js';
export type { ProfileOptions, SandboxProfile } from './profiles.js';
export { OK_ERROR_MESSAGE } from './ok-misbehaviour.js';
export { INCONSISTENCY_RATES } from './inconsistencies.js';
export type { InconsistencyKind, InconsistencyOptions } from './inconsistencies.js';
export type { ListOptions, ListResult, NftPageParams, ReadInterfaceSource, SandboxData } from './data.js';
export type { ChainInfo, ContractInfo, EncodedArgs, NftHolding, NftTokenHolding, WalletInfo } from './dataset.js';
export { EVENT_COLUMNS, TRANSACTION_COLUMNS } from './dataset.js';
export {
  listQuery,
  parseListQuery,
  MAX_PAGE,
  MAX_PAGE_AGGREGATE,
  MAX_LIMIT,
  DEFAULT_LIMIT,
  MAX_CHAIN_IDS,
  CONTRACT_PAGING,
  INDEXER_PAGING,
} from './query.js';
export type { ListQuery, Filter, FilterOp, GroupExpr, AggregateExpr, PagingRules } from './query.js';
export { SandboxHttpError, SandboxOptionsError } from './errors.js';
export {
  ERC20_ABI,
  ERC721_ABI,
  ERC1155_ABI,
  UNKNOWN_ABI,
  RICH_ABI,
  RICH_EVENT_SIGNATURE,
  TOPIC0,
  SELECTOR,
  CANONICAL,
  parseEventSignature,
} from './abi.js';
export type { ContractKind } from './abi.js';
// The `insight-export sandbox` command (yargs) and what tests drive it with.
export { sandboxCommand, sandboxCommandWith, sandboxOptionsFromArgs, runSandbox, type SandboxCommandHooks } from './command.js';
export type { SandboxArgs } from './command.js';
// Reorganisations, answer compression and the indexer's value encodings, for tests and benches.
export { reorganise } from './reorg.js';
export type { ReorgSummary } from './reorg.js';
export { cdnCompress, cdnEncoding } from './cdn-compression.js';
export type { CdnEncoding } from './cdn-compression.js';
export { ABI_BY_KIND, decodeCallWithAbi, wireValue } from './abi.js';
export type { BytesStyle, RichArgs } from './abi.js';
export { goDecodedEvent, goDecodedTransaction, jsonText } from './go-values.js';
export { nftCollection, nftCollectionsPage, nftInstancesPage, nftOwner } from './nft-collections-page.js';
export type { NftHoldingsSource } from './nft-collections-page.js';
export { hash3, unit } from './prng.js';
