/**
 * Writes the output column tables of docs/datasets.md from the dataset modules, so the
 * documentation cannot drift from what the sinks write.
 *
 *   npx tsx scripts/columns-doc.ts           # rewrite the tables in docs/datasets.md
 *   npx tsx scripts/columns-doc.ts --check   # exit 1 when docs/datasets.md is not up to date
 *
 * Each table sits between `<!-- columns:<dataset> -->` and `<!-- /columns:<dataset> -->`, in the
 * dataset's `## <dataset>` section. The aggregates table is derived from that section's job example.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { aggregatesDataset, createAggregateTarget } from '../src/datasets/aggregates.js';
import { blocksDataset } from '../src/datasets/blocks.js';
import type { Column } from '../src/columns/columns.js';
import { eventsDataset } from '../src/datasets/events.js';
import { nftHoldingsDataset } from '../src/datasets/nft-holdings.js';
import { transactionsDataset } from '../src/datasets/transactions.js';
import { DATASET_NAMES, type DatasetName } from '../src/datasets/index.js';
import { createEventDecoder } from '../src/decode/event-decoder.js';
import { parseEventSignature } from '../src/abi/event-signature.js';
import { createTransactionDecoder } from '../src/decode/transaction-decoder.js';
import { parseJob } from '../src/job/index.js';

/** One section per dataset of the registry. */
export const DATASET_SECTIONS = DATASET_NAMES;
type Section = DatasetName;

const EXAMPLE_WALLET = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const EXAMPLE_TOKEN = '0x77f5e148a71be22cf4f3a1816626b240547b6302';
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

/** The file the column tables live in. */
export const DATASETS_DOC = 'docs/datasets.md';

/** The `## <dataset>` section of the datasets document (up to the next "## " heading). */
function datasetSection(doc: string, dataset: Section): string {
  const start = doc.indexOf(`\n## ${dataset}\n`);
  if (start < 0) throw new Error(`${DATASETS_DOC} has no "## ${dataset}" section`);
  const next = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, next < 0 ? undefined : next);
}

/** The ```yaml job example of the dataset's section. */
export function jobExample(doc: string, dataset: Section): string {
  const m = /```yaml\n([\s\S]*?)```/.exec(datasetSection(doc, dataset));
  if (!m) throw new Error(`${DATASETS_DOC}'s "## ${dataset}" has no yaml job example`);
  return m[1]!;
}

/** The columns each dataset writes (with decode on, for the documented example targets). */
export function datasetColumns(doc: string): Record<Section, Column[]> {
  const job = parseJob(jobExample(doc, 'aggregates'), `${DATASETS_DOC} (aggregates example)`);
  const target = job.targets[0]!;
  if (target.kind === 'chain') throw new Error("docs/datasets.md's aggregates example must target a wallet or a contract");
  const aggregate = createAggregateTarget({
    source:
      target.kind === 'wallet'
        ? { kind: 'wallet', address: EXAMPLE_WALLET }
        : { kind: 'contract', address: target.contract, signature: parseEventSignature(target.events[0]!.signature) },
    groupBy: job.aggregates?.group_by ?? [],
    aggregate: job.aggregates?.aggregate ?? [],
  });
  const signature = parseEventSignature(TRANSFER);
  return {
    transactions: transactionsDataset.columns({
      kind: 'wallet',
      address: EXAMPLE_WALLET,
      label: EXAMPLE_WALLET,
      decode: true,
      decoder: createTransactionDecoder({}),
    }),
    events: eventsDataset.columns({
      kind: 'contract',
      address: EXAMPLE_TOKEN,
      signature,
      decode: true,
      decoder: createEventDecoder(signature),
    }),
    aggregates: aggregatesDataset.columns(aggregate),
    nft_holdings: nftHoldingsDataset.columns({ kind: 'nft_holdings', address: EXAMPLE_WALLET, types: ['ERC-721', 'ERC-1155'] }),
    blocks: blocksDataset.columns({}),
  };
}

const TYPE_TEXT: Record<Column['type'], string> = {
  int32: 'int32',
  int64: 'int64',
  uint256: 'uint256 (decimal string)',
  string: 'string',
  bool: 'bool',
  timestamp: 'timestamp (UTC)',
  date: 'date',
  json: 'string (JSON)',
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function columnTable(columns: readonly Column[]): string {
  const lines = ['| column | type | null | description |', '|---|---|---|---|'];
  for (const c of columns) lines.push(`| \`${c.name}\` | ${TYPE_TEXT[c.type]} | ${c.nullable ? 'yes' : 'no'} | ${cell(c.description)} |`);
  return lines.join('\n');
}

/** The datasets document with every column table regenerated. */
export function updateColumnTables(doc: string): string {
  const columns = datasetColumns(doc);
  let out = doc;
  for (const dataset of DATASET_SECTIONS) {
    const open = `<!-- columns:${dataset} -->`;
    const close = `<!-- /columns:${dataset} -->`;
    const a = out.indexOf(open);
    const b = out.indexOf(close);
    if (a < 0 || b < a) throw new Error(`${DATASETS_DOC} lacks the markers ${open} ... ${close}`);
    out = `${out.slice(0, a + open.length)}\n${columnTable(columns[dataset])}\n${out.slice(b)}`;
  }
  return out;
}

const DOC_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', DATASETS_DOC);

async function cli(argv: string[]): Promise<number> {
  const text = await readFile(DOC_PATH, 'utf8');
  const updated = updateColumnTables(text);
  if (argv.includes('--check')) {
    if (updated === text) return 0;
    process.stderr.write(`${DATASETS_DOC} column tables are out of date: run npx tsx scripts/columns-doc.ts\n`);
    return 1;
  }
  if (updated !== text) await writeFile(DOC_PATH, updated);
  process.stdout.write(`${DATASETS_DOC} column tables ${updated === text ? 'are up to date' : 'rewritten'}\n`);
  return 0;
}

if (process.argv[1] !== undefined && /columns-doc\.ts$/.test(process.argv[1])) {
  cli(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
