/** The schemas of a job file's targets (wallets, contracts, chains) and of the fields they share: chains, tables, filters. */
import { z } from 'zod';
import { datasetsFor, datasetsWhere, defaultDatasets, type TargetKind } from '../datasets/index.js';
import { checked } from '../settings/settings.js';
import { ADDRESS_PATTERN, parseAddress, parseAddressOrName, parseJobEventSignature } from '../settings/values.js';
import { MAX_CHAIN_ID, NFT_TYPES } from './job.js';

const chainIdSchema = z.number().int().min(1).max(MAX_CHAIN_ID).describe('An EVM chain id (1 = Ethereum, 8453 = Base, ...).');

export const chainsSchema = z
  .array(chainIdSchema)
  .min(1)
  .describe('Chain ids, one or more (sent in batches of at most source.chain_ids_per_request, 55 by default, per request).');

const addressSchema = checked(
  z.string().regex(new RegExp(ADDRESS_PATTERN), { error: 'is not an address (0x + 40 hex digits)' }),
  parseAddress,
);

const eventSchema = checked(z.string(), parseJobEventSignature).describe(
  'Human-readable event signature with canonical types and `indexed` markers, e.g. "Transfer(address indexed from, address indexed to, uint256 value)". Not a topic hash: topic0 is computed from it.',
);

/** A table name: a folder at the destination and a warehouse identifier, so lowercase, no quoting needed. */
export const TABLE_NAME_PATTERN = '^[a-z][a-z0-9_]*$';
export const TABLE_NAME_MAX = 63;

const tableNameSchema = z
  .string()
  .regex(new RegExp(TABLE_NAME_PATTERN), { error: 'is not a table name (lowercase letters, digits and "_", starting with a letter)' })
  .max(TABLE_NAME_MAX);

/** `tables:` of a wallet or chain target or of a contract's event: a stable name per dataset. */
function tablesSchema(kind: TargetKind) {
  return z
    .partialRecord(z.enum(datasetsFor(kind)), tableNameSchema)
    .describe(
      'Table names by dataset, e.g. {events: transfers, aggregates: transfers_daily}: the folder the rows go to and the warehouse table. Without a name a dataset gets its default table (which for events and aggregates changes with their columns). A name keeps the columns it was first written with: a run that would change them is refused (an Iceberg table may gain columns, or an int32 column become int64); and, for each window of a target, the query it was first exported with: a run that would put the rows of a changed query beside the old ones is refused.',
    );
}

const contractEventSchema = z.union([
  eventSchema,
  z
    .strictObject({ signature: eventSchema, tables: tablesSchema('contract').optional() })
    .describe('An event signature and the tables of its rows.'),
]);

const filterValueSchema = z
  .union([z.string(), z.number()])
  .describe('Filter value: big integers (wei) as decimal strings, hashes as 0x hex; for filter_topic_N an address is left-padded.');

export const filtersSchema = z
  .record(z.string(), filterValueSchema)
  .describe(
    'Extra `filter_*` parameters of the read interface, e.g. {filter_value_gte: "1000000000000000000"}. Checked against the datasets used. Block number and timestamp filters come from `range`.',
  );

/** The datasets a target kind may list, its default marked (from the registry). */
function datasetsDoc(kind: TargetKind): string {
  const dflt = defaultDatasets(kind);
  return `What to export for the ${kind}: ${datasetsFor(kind)
    .map((d) => (dflt.includes(d) ? `${d} (default)` : d))
    .join(', ')}.`;
}

export const walletTargetSchema = z
  .strictObject({
    wallet: checked(z.string(), parseAddressOrName).describe('Wallet address (0x + 40 hex) or a name like "alice.eth".'),
    datasets: z
      .array(z.enum(datasetsFor('wallet')))
      .min(1)
      .optional()
      .describe(datasetsDoc('wallet')),
    chains: chainsSchema.optional().describe("Only these of the job's chains for this target (default: all)."),
    filters: filtersSchema.optional(),
    nft_types: z
      .array(z.enum(NFT_TYPES))
      .min(1)
      .optional()
      .describe(`Token standards for the ${datasetsWhere((c) => c.targetOption === 'nft_types').join(', ')} dataset. Default: all three.`),
    tables: tablesSchema('wallet').optional(),
  })
  .describe('A wallet (sent or received transactions) and the datasets to export for it.');

export const contractTargetSchema = z
  .strictObject({
    contract: addressSchema.describe('Contract address (0x + 40 hex) whose events to export.'),
    events: z
      .array(contractEventSchema)
      .min(1)
      .describe('Event signatures to export (a signature, or {signature, tables}); one stream per signature and chain.'),
    datasets: z
      .array(z.enum(datasetsFor('contract')))
      .min(1)
      .optional()
      .describe(datasetsDoc('contract')),
    abi: z.string().min(1).optional().describe('JSON ABI file for local decoding, relative to the job file.'),
    chains: chainsSchema
      .optional()
      .describe("Only these of the job's chains for this target (default: all). Contract addresses often differ per chain."),
    filters: filtersSchema.optional(),
  })
  .describe('A contract and the event signatures to export from it.');

export const chainTargetSchema = z
  .strictObject({
    datasets: z
      .array(z.enum(datasetsFor('chain')))
      .min(1)
      .describe(datasetsDoc('chain')),
    chains: chainsSchema.optional().describe("Only these of the job's chains for this target (default: all)."),
    tables: tablesSchema('chain').optional(),
  })
  .describe('The chains themselves (no wallet or contract): the datasets to export of each chain, e.g. its blocks.');
