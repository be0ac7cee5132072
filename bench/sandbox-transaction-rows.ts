/**
 * Pages and rows of the sandbox's hot wallet as the exporter gets and builds them (JSON.parse ->
 * normalise -> toRow with decoding), for the measurements of one stage in isolation.
 */
import { buildSandboxData, serveReadInterface } from '@insight-export/sandbox';
import { normaliseListResponse } from '../src/source/response-records.js';
import { transactionsDataset, type WalletTransactionsTarget } from '../src/datasets/transactions.js';
import { createTransactionDecoder } from '../src/decode/transaction-decoder.js';
import type { Column, Row } from '../src/columns/columns.js';
import type { TransactionRecord } from '../src/source/records.js';

/**
 * Response bodies of up to `pages` pages of 1000 rows per chain (3 chains, sorted by block, decoded)
 * of the first wallet of a sandbox of `transactions`; stops after the first page without rows.
 */
export async function sandboxPageBodies(transactions = 300_000, pages = 20): Promise<{ wallet: string; bodies: string[] }> {
  const data = buildSandboxData({ transactions });
  const server = await serveReadInterface(data, { port: 0 });
  const wallet = data.wallets[0]!.address;
  const bodies: string[] = [];
  try {
    for (let page = 0; page < pages; page++) {
      const res = await fetch(
        `${server.url}/wallets/${wallet}/transactions?chain_id=1&chain_id=8453&chain_id=42161&limit=1000&page=${page}&sort_by=block_number&sort_order=asc&decode=true`,
      );
      const text = await res.text();
      bodies.push(text);
      if (!text.includes('"hash"')) break;
    }
  } finally {
    await server.close();
  }
  return { wallet, bodies };
}

/** A wallet as a target of the transactions dataset with decoding on (built-in ABIs), as a job with `decode: true` makes it. */
export function decodingWalletTarget(wallet: string): WalletTransactionsTarget {
  return { kind: 'wallet', address: wallet, label: wallet, decode: true, decoder: createTransactionDecoder({}) };
}

/** The exporter's rows of one response body: JSON.parse -> normalise -> toRow. */
export function pageRows(body: string, target: WalletTransactionsTarget): Row[] {
  const records = normaliseListResponse(JSON.parse(body), 'bench', 'transactions', false).data as TransactionRecord[];
  return records.map((r) => transactionsDataset.toRow(r, target));
}

/** The rows the exporter builds from those pages (sandbox of 300,000 transactions), and their columns. */
export async function sandboxTransactionRows(pages = 20): Promise<{ rows: Row[]; columns: Column[] }> {
  const { wallet, bodies } = await sandboxPageBodies(300_000, pages);
  const target = decodingWalletTarget(wallet);
  return { rows: bodies.flatMap((b) => pageRows(b, target)), columns: transactionsDataset.columns(target) };
}
