/**
 * What the tests do on the chain: deploy the OpenZeppelin 4.9.6 ERC-20 and ERC-721 presets and
 * send token transfers, mints, native transfers and deliberately failing transfers from several
 * accounts, block by block, remembering what each transaction was meant to do (the ground truth
 * for the decoded columns). Transactions go out as raw eth_sendTransaction calls on anvil's
 * unlocked accounts, with explicit nonce and gas (no estimation against pending state). Decoded
 * inputs use the presets' parameter names (OpenZeppelin 4.9.6: `transfer(to, amount)`).
 */
import { createRequire } from 'node:module';
import { encodeAbiParameters, encodeFunctionData, getContractAddress, toHex, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mulberry32 } from '../../helpers/prng.js';
import type { Anvil } from './anvil.js';

const require = createRequire(import.meta.url);
export const ERC20_ARTIFACT = require.resolve('@openzeppelin/contracts/build/contracts/ERC20PresetFixedSupply.json');
export const ERC721_ARTIFACT = require.resolve('@openzeppelin/contracts/build/contracts/ERC721PresetMinterPauserAutoId.json');
const erc20Artifact = require(ERC20_ARTIFACT) as { abi: Abi; bytecode: Hex };
const erc721Artifact = require(ERC721_ARTIFACT) as { abi: Abi; bytecode: Hex };

/** anvil's default account 9 (test mnemonic): signs the EIP-7702 authorization. */
const ACCOUNT9_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6';
const ZERO = '0x0000000000000000000000000000000000000000';
export const ERC20_SUPPLY = 10n ** 24n;

export type SentKind = 'erc20-deploy' | 'erc721-deploy' | 'erc20-transfer' | 'erc721-transfer' | 'erc721-mint' | 'native';

/** One transaction the test sent and what it should have done. */
export interface Sent {
  hash: string;
  kind: SentKind;
  from: string;
  /** Token or native recipient. */
  to: string;
  /** ERC-20 amount or wei. */
  amount?: bigint;
  tokenId?: bigint;
  /** False for transfers sent to fail (more than the balance). */
  ok: boolean;
  /** The call as the decoded columns must show it (null: no calldata). */
  call: { name: string; inputs: Record<string, string> } | null;
  /** Transfer logs it emits: from, to, amount or token id. */
  transfers: { token: 'erc20' | 'erc721'; from: string; to: string; amountOrId: bigint }[];
}

export class ChainActivity {
  accounts: string[] = [];
  erc20!: string;
  erc721!: string;
  readonly sent: Sent[] = [];
  private nonces = new Map<string, number>();
  private balances = new Map<string, bigint>();
  private credits = new Map<string, bigint>();
  /** token id -> owner, and the block from which it may move again. */
  private nfts = new Map<bigint, { owner: string; movable: number }>();
  private nextTokenId = 0n;
  private readonly random: () => number;

  constructor(
    readonly anvil: Anvil,
    seed = 7,
  ) {
    this.random = mulberry32(seed);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  async init(): Promise<void> {
    this.accounts = (await this.anvil.rpc<string[]>('eth_accounts')).map((a) => a.toLowerCase());
    for (const a of this.accounts) this.nonces.set(a, Number(await this.anvil.rpc<string>('eth_getTransactionCount', [a, 'pending'])));
  }

  private queue: Promise<unknown> = Promise.resolve();

  /** Sends in call order (anvil's pool drops transactions whose nonces arrive out of order). */
  private send(from: string, tx: Record<string, unknown>): Promise<string> {
    const nonce = this.nonces.get(from)!;
    this.nonces.set(from, nonce + 1);
    const sent = this.queue.then(() =>
      this.anvil.rpc<string>('eth_sendTransaction', [{ from, nonce: toHex(nonce), gas: toHex(300_000), ...tx }]),
    );
    this.queue = sent.catch(() => undefined);
    return sent.then((h) => h.toLowerCase());
  }

  /** Block 1: both presets from account 0 (the ERC-20's whole supply minted to account 0). */
  async deploy(): Promise<void> {
    const owner = this.accounts[0]!;
    const n = this.nonces.get(owner)!;
    this.erc20 = getContractAddress({ from: owner as Address, nonce: BigInt(n) }).toLowerCase();
    this.erc721 = getContractAddress({ from: owner as Address, nonce: BigInt(n + 1) }).toLowerCase();
    const ctor20 = encodeAbiParameters(
      [{ type: 'string' }, { type: 'string' }, { type: 'uint256' }, { type: 'address' }],
      ['Anvil Dollar', 'ADOL', ERC20_SUPPLY, owner as Address],
    );
    const ctor721 = encodeAbiParameters(
      [{ type: 'string' }, { type: 'string' }, { type: 'string' }],
      ['Anvil Apes', 'AAPE', 'https://nft.invalid/'],
    );
    const h20 = await this.send(owner, { data: erc20Artifact.bytecode + ctor20.slice(2), gas: toHex(3_000_000) });
    const h721 = await this.send(owner, { data: erc721Artifact.bytecode + ctor721.slice(2), gas: toHex(6_000_000) });
    this.sent.push(
      {
        hash: h20,
        kind: 'erc20-deploy',
        from: owner,
        to: this.erc20,
        ok: true,
        call: null,
        transfers: [{ token: 'erc20', from: ZERO, to: owner, amountOrId: ERC20_SUPPLY }],
      },
      { hash: h721, kind: 'erc721-deploy', from: owner, to: this.erc721, ok: true, call: null, transfers: [] },
    );
    this.balances.set(owner, ERC20_SUPPLY);
    await this.anvil.mine();
  }

  private erc20Transfer(from: string, to: string, amount: bigint, ok: boolean, extra: Record<string, unknown> = {}): Promise<void> {
    const data = encodeFunctionData({ abi: erc20Artifact.abi, functionName: 'transfer', args: [to, amount] });
    if (ok) {
      this.balances.set(from, this.balances.get(from)! - amount);
      this.credits.set(to, (this.credits.get(to) ?? 0n) + amount);
    }
    return this.send(from, { to: this.erc20, data, ...extra }).then((hash) => {
      this.sent.push({
        hash,
        kind: 'erc20-transfer',
        from,
        to,
        amount,
        ok,
        call: { name: 'transfer', inputs: { to, amount: amount.toString() } },
        transfers: ok ? [{ token: 'erc20', from, to, amountOrId: amount }] : [],
      });
    });
  }

  /**
   * One block of activity: account 0 hands out ERC-20 and mints NFTs; every other account sends
   * ERC-20 transfers (some legacy, some with an access list), moves an NFT it owns, sends ether,
   * and one of them a transfer above its balance (reverts: status 0).
   */
  async block(blockNo: number, transfersPerSender = 4): Promise<number> {
    const owner = this.accounts[0]!;
    const senders = this.accounts.slice(1);
    const jobs: Promise<void>[] = [];
    for (const to of senders)
      if ((this.balances.get(to) ?? 0n) < 10n ** 18n) jobs.push(this.erc20Transfer(owner, to, 1000n * 10n ** 18n, true));
    for (let k = 0; k < 2; k++) {
      const to = this.pick(senders);
      const id = this.nextTokenId++;
      this.nfts.set(id, { owner: to, movable: blockNo + 1 });
      const data = encodeFunctionData({ abi: erc721Artifact.abi, functionName: 'mint', args: [to] });
      jobs.push(
        this.send(owner, { to: this.erc721, data }).then((hash) => {
          this.sent.push({
            hash,
            kind: 'erc721-mint',
            from: owner,
            to,
            tokenId: id,
            ok: true,
            call: { name: 'mint', inputs: { to } },
            transfers: [{ token: 'erc721', from: ZERO, to, amountOrId: id }],
          });
        }),
      );
    }
    senders.forEach((from, i) => {
      const others = this.accounts.filter((a) => a !== from);
      const balance = this.balances.get(from) ?? 0n;
      for (let k = 0; k < transfersPerSender && balance > 0n; k++) {
        const amount = 1n + BigInt(Math.floor(this.random() * 1e9)) * 10n ** 9n;
        if (amount * BigInt(transfersPerSender) > balance) break;
        const variant = (blockNo + i + k) % 7;
        const extra =
          variant === 0
            ? { gasPrice: toHex(3_000_000_000n) }
            : variant === 1
              ? {
                  type: '0x1',
                  gasPrice: toHex(3_000_000_000n),
                  accessList: [{ address: this.erc20, storageKeys: [toHex(i, { size: 32 })] }],
                }
              : {};
        jobs.push(this.erc20Transfer(from, this.pick(others), amount, true, extra));
      }
      const nft = [...this.nfts.entries()].find(([, v]) => v.owner === from && v.movable <= blockNo);
      if (nft) {
        const [id] = nft;
        const to = this.pick(others);
        this.nfts.set(id, { owner: to, movable: blockNo + 1 });
        const fn = (blockNo + i) % 2 === 0 ? 'transferFrom' : 'safeTransferFrom';
        const data = encodeFunctionData({ abi: erc721Artifact.abi, functionName: fn, args: [from, to, id] });
        jobs.push(
          this.send(from, { to: this.erc721, data }).then((hash) => {
            this.sent.push({
              hash,
              kind: 'erc721-transfer',
              from,
              to,
              tokenId: id,
              ok: true,
              call: { name: fn, inputs: { from, to, tokenId: id.toString() } },
              transfers: [{ token: 'erc721', from, to, amountOrId: id }],
            });
          }),
        );
      }
      if ((blockNo + i) % 3 === 0) {
        const to = this.pick(others);
        const value = BigInt(1 + i) * 10n ** 15n;
        jobs.push(
          this.send(from, { to, value: toHex(value), gas: toHex(21_000) }).then((hash) => {
            this.sent.push({ hash, kind: 'native', from, to, amount: value, ok: true, call: null, transfers: [] });
          }),
        );
      }
      if (i === blockNo % senders.length) jobs.push(this.erc20Transfer(from, this.pick(others), balance + ERC20_SUPPLY, false));
    });
    await Promise.all(jobs);
    const mined = await this.anvil.mine();
    for (const [a, c] of this.credits) this.balances.set(a, (this.balances.get(a) ?? 0n) + c);
    this.credits.clear();
    return mined;
  }

  /** Last block: an EIP-7702 transaction (type 4), account 9 authorising the ERC-20's code, sent by account 0. */
  async setCode(): Promise<void> {
    const authority = privateKeyToAccount(ACCOUNT9_KEY);
    const authorityAddress = authority.address.toLowerCase();
    const nonce = this.nonces.get(authorityAddress)!;
    const auth = await authority.signAuthorization({ address: this.erc20 as Address, chainId: 31337, nonce });
    this.nonces.set(authorityAddress, nonce + 1);
    const from = this.accounts[0]!;
    // The call runs the delegated ERC-20 code: totalSupply() (an empty call would revert, no fallback).
    const hash = await this.send(from, {
      to: authorityAddress,
      data: encodeFunctionData({ abi: erc20Artifact.abi, functionName: 'totalSupply' }),
      type: '0x4',
      authorizationList: [
        {
          chainId: toHex(auth.chainId),
          address: auth.address,
          nonce: toHex(auth.nonce),
          yParity: toHex(auth.yParity ?? 0),
          r: auth.r,
          s: auth.s,
        },
      ],
    });
    this.sent.push({ hash, kind: 'native', from, to: authorityAddress, amount: 0n, ok: true, call: null, transfers: [] });
    await this.anvil.mine();
  }
}
