import type { CommandModule } from 'yargs';
import { NFT_TOKEN_TYPES, isAddress, validateAddress, type NftTokenType } from '../source/query.js';
import type { InsightClient } from '../source/client.js';
import type { NftCollection } from '../source/records.js';
import {
  CommandArgumentError,
  InputRejectedError,
  chainIdsOf,
  printResult,
  rejectedInput,
  withClient,
  withSourceFlags,
  type SourceArgs,
} from './source-options.js';
import { renderTable, terminalWidth } from './table.js';

interface NftsArgs extends SourceArgs {
  address: string;
  type?: string[] | undefined;
}

export interface NftsResult {
  address: string;
  chain_id: number;
  collections: NftCollection[];
}

/** Operation 5: every page of a wallet's NFT collections (following next_page_params). */
export const nftsCommand: CommandModule<object, NftsArgs> = {
  command: 'nfts <address>',
  describe: 'List the NFTs a wallet holds on one chain (--chain), by collection (the explorer route, every page)',
  builder: (y) =>
    withSourceFlags(y)
      .positional('address', { type: 'string', demandOption: true, describe: 'Wallet address, or a name resolved first (alice.eth)' })
      .option('chain', { type: 'number', array: true, describe: 'The chain to list (required; one)' })
      .option('type', {
        alias: 't',
        type: 'string',
        array: true,
        choices: [...NFT_TOKEN_TYPES],
        describe: 'Token standards (default: all)',
      })
      .example('$0 nfts alice.eth --base-url sandbox --chain 8453', "A wallet's NFTs on Base")
      .example('$0 nfts 0x344940aef33a4e9915b793dfe282f3727eff9869 --chain 1 --type ERC-721 --json', 'ERC-721 only, as JSON') as never,
  handler: async (args) => {
    const chainIds = chainIdsOf(args);
    // The explorer route has no chain parameter in the contract and its answer does not say which
    // chain it is from: without --chain the rows would be some chain's, unnamed. Nothing lists the
    // explorer's chains either, so "every chain" cannot be asked: the user names one.
    if (!chainIds || chainIds.length !== 1) {
      throw new CommandArgumentError(chainIds ? 'nfts reads one chain at a time' : 'nfts needs --chain: which chain are the NFTs on?', {
        details: chainIds ? `--chain ${chainIds.join(' --chain ')}` : 'no --chain given',
        hint: 'Give one --chain, e.g. --chain 1 (Ethereum), --chain 8453 (Base), --chain 42161 (Arbitrum One): the explorer route answers for one chain per request and does not say which. For several chains, run nfts once per chain, or export the nft_holdings dataset with a job (source.chains).',
      });
    }
    const types = args.type?.length ? ([...new Set(args.type)] as NftTokenType[]) : undefined;
    const input = String(args.address);
    const result = await withClient(args, async (client) => {
      const address = await walletAddress(client, input, chainIds);
      const collections: NftCollection[] = [];
      try {
        for await (const c of client.nftCollections(address, { types, chainIds })) collections.push(c);
      } catch (err) {
        rejectedInput(err, `the address ${address}`);
      }
      return { address, chain_id: chainIds[0]!, collections } satisfies NftsResult;
    });
    printResult(args, result, () => renderNfts(result, terminalWidth()));
  },
};

/** An address as given, or the address a name resolves to. */
async function walletAddress(client: InsightClient, input: string, chainIds: number[] | undefined): Promise<string> {
  if (isAddress(input)) return validateAddress('address', input);
  if (input.startsWith('0x') || !input.includes('.')) {
    throw new CommandArgumentError(`Not a wallet address or name: ${JSON.stringify(input)}`, {
      hint: 'Give an address (0x + 40 hex digits) or a name such as alice.eth.',
    });
  }
  const res = await client
    .resolve(input, chainIds ? { chainIds } : {})
    .catch((err: unknown) => rejectedInput(err, `the name ${JSON.stringify(input)}`));
  const address = res.data.address?.toLowerCase();
  if (!address || !isAddress(address)) {
    throw new InputRejectedError(`The name ${JSON.stringify(input)} does not resolve to an address`, {
      details: `resolve answered type "${res.data.type}"`,
      hint: 'Give the wallet address instead, or check the name.',
    });
  }
  return address;
}

export function renderNfts(result: NftsResult, maxWidth?: number): string {
  const rows = result.collections.flatMap((c) => c.token_instances.map((i) => ({ c, i })));
  const head = `${result.address} on chain ${result.chain_id}: ${result.collections.length} collections, ${rows.length} tokens\n`;
  return (
    head +
    renderTable(
      rows,
      [
        { header: 'collection', value: (r) => r.c.token.name },
        { header: 'symbol', value: (r) => r.c.token.symbol },
        { header: 'type', value: (r) => r.c.token.type },
        { header: 'token_address', value: (r) => r.c.token.address },
        { header: 'token_id', value: (r) => r.i.id, align: 'right' },
        { header: 'value', value: (r) => r.i.value, align: 'right' },
        { header: 'name', value: (r) => (typeof r.i.metadata?.name === 'string' ? r.i.metadata.name : null) },
      ],
      { maxWidth, empty: '(no NFTs)' },
    )
  );
}
