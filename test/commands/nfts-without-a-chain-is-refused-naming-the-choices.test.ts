/**
 * Issue 14.9: `nfts` without `--chain` silently listed one chain's NFTs (the explorer's default),
 * without saying which. The explorer route answers for one chain and its answer does not name it,
 * and nothing lists an explorer's chains: the command refuses (exit 2) and says what to give.
 */
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';

it('nfts without --chain exits 2 naming --chain, example chain ids and the multi-chain alternatives', async () => {
  const res = await runCli(['nfts', 'alice.eth', '--base-url', 'sandbox', '--log-level', 'silent']);
  expect(res.code).toBe(2);
  expect(res.stdout).toBe('');
  expect(res.stderr).toMatch(/nfts needs --chain/);
  expect(res.stderr).toMatch(/--chain 1\b/);
  expect(res.stderr).toMatch(/nft_holdings/);
});
