/**
 * Writes the output column tables of README.md's "## Datasets" section from the dataset modules,
 * so the documentation cannot drift from what the sinks write.
 *
 *   npx tsx scripts/columns-doc.ts           # rewrite the tables in README.md
 *   npx tsx scripts/columns-doc.ts --check   # exit 1 when README.md is not up to date
 *
 * Each table sits between `<!-- columns:<dataset> -->` and `<!-- /columns:<dataset> -->`. The
 * aggregates table is derived from the aggregates job example of the same section.
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

/** The README's "## Datasets" section (up to the next "## " heading). */
export function datasetsSection(readme: string): string {
  const start = readme.indexOf('\n## Datasets\n');
  if (start < 0) throw new Error('README.md has no "## Datasets" section');
  const next = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, next < 0 ? undefined : next);
}

/** The ```yaml job example under `### <dataset>` of the Datasets section. */
export function jobExample(readme: string, dataset: Section): string {
  const section = datasetsSection(readme);
  const at = section.indexOf(`\n### ${dataset}\n`);
  if (at < 0) throw new Error(`README.md has no "### ${dataset}" in its Datasets section`);
  const m = /```yaml\n([\s\S]*?)```/.exec(section.slice(at));
  if (!m) throw new Error(`README.md's "### ${dataset}" has no yaml job example`);
  return m[1]!;
}

/** The columns each dataset writes (with decode on, for the documented example targets). */
export function datasetColumns(readme: string): Record<Section, Column[]> {
  const job = parseJob(jobExample(readme, 'aggregates'), 'README.md (aggregates example)');
  const target = job.targets[0]!;
  if (target.kind === 'chain') throw new Error("README.md's aggregates example must target a wallet or a contract");
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

/** README text with every column table regenerated. */
export function updateReadme(readme: string): string {
  const columns = datasetColumns(readme);
  let out = readme;
  for (const dataset of DATASET_SECTIONS) {
    const open = `<!-- columns:${dataset} -->`;
    const close = `<!-- /columns:${dataset} -->`;
    const a = out.indexOf(open);
    const b = out.indexOf(close);
    if (a < 0 || b < a) throw new Error(`README.md lacks the markers ${open} ... ${close}`);
    out = `${out.slice(0, a + open.length)}\n${columnTable(columns[dataset])}\n${out.slice(b)}`;
  }
  return out;
}

const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');

async function cli(argv: string[]): Promise<number> {
  const text = await readFile(README, 'utf8');
  const updated = updateReadme(text);
  if (argv.includes('--check')) {
    if (updated === text) return 0;
    process.stderr.write('README.md column tables are out of date: run npx tsx scripts/columns-doc.ts\n');
    return 1;
  }
  if (updated !== text) await writeFile(README, updated);
  process.stdout.write(updated === text ? 'README.md column tables are up to date\n' : 'README.md column tables rewritten\n');
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
