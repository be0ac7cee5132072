/**
 * Every run checks its tables' columns against the destination, windows to export or not (issue 45
 * item 4), so it reads them without building decoders (viem): the transaction decoder's columns as
 * a constant, an event's from its signature (TargetFactory.tableOf). Those must be the very name
 * and columns the built target gives the writers, for every dataset and decode setting.
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DATASETS } from '../../src/datasets/index.js';
import { parseJob } from '../../src/job/index.js';
import { jobStreams } from '../../src/plan/streams.js';
import { TargetFactory } from '../../src/run/targets.js';

const job = (decode: boolean) =>
  parseJob(
    stringify({
      name: 'shapes',
      source: { chains: [1] },
      targets: [
        { wallet: '0x1111111111111111111111111111111111111111', datasets: ['transactions', 'aggregates', 'nft_holdings'] },
        {
          contract: '0x2222222222222222222222222222222222222222',
          datasets: ['events', 'aggregates'],
          events: [
            'Transfer(address indexed from, address indexed to, uint256 value)',
            'Approval(address,address,uint256)',
            { signature: 'Swap(address indexed sender, int256 amount0, uint128[] path, (uint8,bool) flags)', tables: { events: 'swaps' } },
          ],
        },
      ],
      aggregates: { group_by: ['chain_id'], aggregate: ['count() as n'] },
      range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
      decode,
    }),
    'jobs/shapes.yaml',
  );

describe("a table's name and columns known without building its decoder", () => {
  it.each([true, false])('equal those of the built target (decode: %s)', async (decode) => {
    const j = job(decode);
    const streams = jobStreams(j);
    expect(new Set(streams.map((s) => s.dataset))).toEqual(new Set(['transactions', 'aggregates', 'nft_holdings', 'events']));
    const factory = new TargetFactory(j);
    for (const spec of streams) {
      const built = await factory.forDataset(spec);
      const expected = { name: TargetFactory.tableName(spec, built), columns: DATASETS[spec.dataset].columns(built) };
      expect(await factory.tableOf(spec), spec.unitKey).toEqual(expected);
    }
  });
});
