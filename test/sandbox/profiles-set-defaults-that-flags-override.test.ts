import yargs, { type Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { sandboxCommand, sandboxOptionsFromArgs, type SandboxArgs } from '@insight-export/sandbox';
import {
  INCONSISTENCY_RATES,
  SANDBOX_PROFILES,
  SandboxOptionsError,
  listQuery,
  startSandbox,
  withProfile,
  type Sandbox,
  type SandboxOptions,
} from '@insight-export/sandbox';
import { getJson } from '../helpers/sandbox.js';

async function withSandbox<T>(opts: SandboxOptions, fn: (s: Sandbox) => Promise<T>): Promise<T> {
  const s = await startSandbox({ transactions: 6_000, seed: 21, ...opts });
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

function cliOptions(argv: string[]): SandboxOptions {
  const parsed = (sandboxCommand.builder as (y: Argv) => Argv)(yargs(argv)).parseSync() as unknown as SandboxArgs;
  return withProfile(sandboxOptionsFromArgs(parsed, {}));
}

describe('sandbox profiles', () => {
  it('indexer turns on every behaviour of the real indexer; hostile adds the misbehaviours; contract none', () => {
    expect(withProfile({ profile: 'indexer' })).toMatchObject({ walletUnion: true, unstableOrder: true, indexerLimits: true });
    const hostile = withProfile({ profile: 'hostile' });
    expect(hostile).toMatchObject(SANDBOX_PROFILES.indexer);
    for (const rate of [hostile.repeatEarlierRows, hostile.foreignRows, hostile.okErrorBody, hostile.okWithoutData])
      expect(rate).toBeGreaterThan(0);
    expect(withProfile({ seed: 3 })).toEqual({ seed: 3 });
  });

  it('hostile also turns on every inconsistency at a low rate; indexer and contract none', () => {
    const hostile = withProfile({ profile: 'hostile' });
    for (const key of INCONSISTENCY_RATES) {
      expect(hostile[key], key).toBeGreaterThan(0);
      expect(hostile[key], key).toBeLessThanOrEqual(0.05);
      expect(withProfile({ profile: 'indexer' })[key], key).toBeUndefined();
      expect(withProfile({})[key], key).toBeUndefined();
    }
    expect(hostile.replicaLagBehindSeconds).toBeGreaterThan(0);
    expect(hostile.consistentAfterRequests).toBeUndefined();
  });

  it('the CLI: a flag per inconsistency, unset unless given; a bad rate or time is a typed bad-input error', async () => {
    expect(
      cliOptions([
        ...['--replica-lag', '0.3', '--replica-lag-until', '2024-02-02T12:00:00Z', '--replica-lag-behind', '600'],
        ...['--stale-cache', '0.2', '--empty-answers', '0.1', '--millisecond-timestamps', '0.4', '--neighbour-slices', '0.5'],
        ...['--cut-full-pages', '0.6', '--consistent-after-requests', '900'],
      ]),
    ).toMatchObject({
      replicaLag: 0.3,
      replicaLagUntil: Date.parse('2024-02-02T12:00:00Z') / 1000,
      replicaLagBehindSeconds: 600,
      staleCache: 0.2,
      emptyAnswers: 0.1,
      millisecondTimestamps: 0.4,
      neighbourSlices: 0.5,
      cutFullPages: 0.6,
      consistentAfterRequests: 900,
    });
    const plain = cliOptions([]);
    for (const key of INCONSISTENCY_RATES) expect(plain[key], key).toBeUndefined();
    expect(cliOptions(['--profile', 'hostile', '--replica-lag', '0'])).toMatchObject({ replicaLag: 0, staleCache: 0.05 });
    expect(() => cliOptions(['--replica-lag-until', 'soon'])).toThrow(SandboxOptionsError);
    await expect(startSandbox({ transactions: 500, staleCache: -0.1 })).rejects.toThrow(SandboxOptionsError);
    await expect(startSandbox({ transactions: 500, consistentAfterRequests: 1.5 })).rejects.toThrow(SandboxOptionsError);
  });

  it('options set explicitly win over the profile, unset ones do not', () => {
    expect(withProfile({ profile: 'indexer', walletUnion: false, unstableOrder: undefined })).toMatchObject({
      walletUnion: false,
      unstableOrder: true,
    });
    expect(() => withProfile({ profile: 'nope' as never })).toThrow(SandboxOptionsError);
  });

  it('the CLI: --profile indexer sets the defaults, a flag given overrides one, flags not given leave them', () => {
    expect(cliOptions(['--profile', 'indexer'])).toMatchObject({ walletUnion: true, unstableOrder: true, indexerLimits: true });
    expect(cliOptions(['--profile', 'indexer', '--no-wallet-union'])).toMatchObject({
      walletUnion: false,
      unstableOrder: true,
      indexerLimits: true,
    });
    const plain = cliOptions(['--ok-error-body', '0.2', '--unstable-order']);
    expect(plain).toMatchObject({ okErrorBody: 0.2, unstableOrder: true });
    expect(plain.walletUnion).toBeUndefined();
  });

  it('a rate outside 0..1 or an unknown profile is a typed bad-input error', async () => {
    await expect(startSandbox({ transactions: 500, okWithoutData: 1.5 })).rejects.toThrow(SandboxOptionsError);
    await expect(startSandbox({ transactions: 500, profile: 'real' as never })).rejects.toThrow(SandboxOptionsError);
  });

  it('a server started with the indexer profile answers like the indexer: default limit 5, the union on the wallet route', async () => {
    await withSandbox({ profile: 'indexer' }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const halves = [truth.filter((t) => t.from_address === alice), truth.filter((t) => t.to_address === alice)];
      const answers = new Set<string>();
      for (let i = 0; i < 8; i++) {
        const { body } = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number`);
        expect(body.data).toHaveLength(5);
        answers.add(JSON.stringify(body.data.map((r: any) => r.block_number)));
      }
      // page 0: the first five rows of whichever half the union put first (by block: rows tied on block_number may swap)
      const firstFive = (h: typeof truth) => JSON.stringify(h.slice(0, 5).map((t) => t.block_number));
      expect(answers).toEqual(new Set(halves.map(firstFive)));
    });
  });
});
