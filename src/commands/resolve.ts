import type { CommandModule } from 'yargs';
import { isoTime } from '../columns/columns.js';
import type { BlockRecord, EventRecord, ResolveResponse, TransactionRecord } from '../source/records.js';
import { chainIdsOf, printResult, rejectedInput, withClient, withSourceFlags, type SourceArgs } from './source-options.js';
import { renderFields, renderTable, terminalWidth } from './table.js';

interface ResolveArgs extends SourceArgs {
  input: string;
}

/** `Transfer(address,address,uint256)`, names and `indexed` allowed. */
const SIGNATURE_RE = /^[A-Za-z_$][\w$]*\(.*\)$/s;

/** Operation 3: what a block number, hash, address, signature, selector or name is. */
export const resolveCommand: CommandModule<object, ResolveArgs> = {
  command: 'resolve <input>',
  describe: 'Resolve a block number, transaction/block hash, address, event signature, selector or name',
  builder: (y) =>
    withSourceFlags(y)
      .positional('input', { type: 'string', demandOption: true, describe: 'Block number, 0x hash/address/selector, signature or name' })
      .example('$0 resolve alice.eth --base-url sandbox', 'The address behind a name')
      .example('$0 resolve 19130000 --chain 1 --json', 'A block, as JSON') as never,
  handler: async (args) => {
    const chainIds = chainIdsOf(args);
    const input = String(args.input);
    const res = await withClient(args, async (client) => {
      const ask = (text: string) =>
        client
          .resolve(text, chainIds ? { chainIds } : {})
          .catch((err: unknown) => rejectedInput(err, `the input ${JSON.stringify(input)}`));
      if (!SIGNATURE_RE.test(input)) return ask(input);
      // The service resolves hashes, not signatures: an event's topic0, else a function's selector.
      const { toEventSelector, toFunctionSelector } = await import('viem');
      const asEvent = await ask(toEventSelector(input));
      if (asEvent.data.events.length > 0 || asEvent.data.transactions.length > 0) return asEvent;
      return ask(toFunctionSelector(input));
    });
    printResult(args, res, () => renderResolve(res, terminalWidth()));
  },
};

export function renderResolve(res: ResolveResponse, maxWidth?: number): string {
  const d = res.data;
  const parts = [
    renderFields([
      ['type', d.type],
      ['address', d.address],
      ['chains', res.meta.chain_ids.join(', ') || null],
    ]),
  ];
  const section = <T>(title: string, rows: T[], table: (rows: T[]) => string) => {
    if (rows.length > 0) parts.push(`\n${title} (${rows.length})\n${table(rows)}`);
  };
  section('blocks', d.blocks, (rows: BlockRecord[]) =>
    renderTable(
      rows,
      [
        { header: 'chain_id', value: (b) => b.chain_id, align: 'right' },
        { header: 'block_number', value: (b) => b.block_number, align: 'right' },
        { header: 'block_time', value: (b) => isoTime(b.block_timestamp) },
        { header: 'block_hash', value: (b) => b.block_hash },
        { header: 'transactions', value: (b) => b.transaction_count, align: 'right' },
        { header: 'gas_used', value: (b) => b.gas_used, align: 'right' },
      ],
      { maxWidth },
    ),
  );
  section('transactions', d.transactions, (rows: TransactionRecord[]) =>
    renderTable(
      rows,
      [
        { header: 'chain_id', value: (t) => t.chain_id, align: 'right' },
        { header: 'block_number', value: (t) => t.block_number, align: 'right' },
        { header: 'hash', value: (t) => t.hash },
        { header: 'from', value: (t) => t.from_address },
        { header: 'to', value: (t) => t.to_address },
        { header: 'value', value: (t) => t.value, align: 'right' },
        { header: 'status', value: (t) => t.status, align: 'right' },
      ],
      { maxWidth },
    ),
  );
  section('events', d.events, (rows: EventRecord[]) =>
    renderTable(
      rows,
      [
        { header: 'chain_id', value: (e) => e.chain_id, align: 'right' },
        { header: 'block_number', value: (e) => e.block_number, align: 'right' },
        { header: 'transaction_hash', value: (e) => e.transaction_hash },
        { header: 'log_index', value: (e) => e.log_index, align: 'right' },
        { header: 'address', value: (e) => e.address },
        { header: 'topic0', value: (e) => e.topics[0] },
      ],
      { maxWidth },
    ),
  );
  if (d.blocks.length + d.transactions.length + d.events.length === 0 && d.address === null) parts.push('\nnothing found\n');
  return parts.join('');
}
