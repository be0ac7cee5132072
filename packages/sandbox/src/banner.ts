/**
 * What `insight-export sandbox` prints under its URLs: the data set's size and chains, the hot
 * wallet, and the contracts a job can use. The addresses depend on --seed and --transactions (a
 * contract's address follows its deployer's nonce), so a job written for one data set names the
 * contracts of another: the banner names them for the one served. ERC-20 tokens one line each;
 * the NFT collections, many, by count per standard.
 */
import type { SandboxData } from './data.js';

export function sandboxBanner(data: SandboxData): string[] {
  const hot = data.wallets[0]!;
  const lines = [
    `# ${data.transactionTotal} transactions, chains ${data.chains.map((c) => c.chainId).join(',')}; hot wallet ${hot.address} (${hot.name}); Ctrl-C to stop\n`,
  ];
  const tokens = data.contracts.filter((c) => c.kind === 'erc20');
  for (const c of tokens) lines.push(`# contract ${c.symbol ?? c.name} (ERC-20, Transfer events) on chain ${c.chainId}: ${c.address}\n`);
  const others = new Map<string, number>();
  for (const c of data.contracts) if (c.kind !== 'erc20') others.set(c.kind, (others.get(c.kind) ?? 0) + 1);
  if (others.size > 0) {
    const counts = [...others].map(([kind, n]) => `${n} ${kind}`).join(', ');
    lines.push(`# and NFT collections (${counts}): a wallet's are listed by \`insight-export nfts <wallet>\`\n`);
  }
  return lines;
}
