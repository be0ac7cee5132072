import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { pageWindow } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';
import { blockWindowOptions, fakeService, makeRows, type Rec } from './paginator-fixtures.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects garbage once the current job (which keeps every WeakRef target it read alive) is over. */
async function collected(refs: WeakRef<object>[]): Promise<number> {
  await new Promise((r) => setImmediate(r));
  gc();
  await new Promise((r) => setImmediate(r));
  return refs.filter((r) => r.deref() === undefined).length;
}

describe('a window paging on keeps no answer it has read', () => {
  it('drops the shared first answer and the full answers it split, keeping only what paging needs', async () => {
    const limit = 10;
    const rows = [...makeRows(1, 40, () => 3), ...makeRows(2, 40, () => 3)];
    const service = fakeService(rows);
    // Each answer in fresh objects, as the client parses them; the first (shared by both chains, full for each) watched.
    const firstAnswer: WeakRef<object>[] = [];
    let requests = 0;
    const fetch = async (chains: number[], filters: Filters) => {
      const answer = (await service.fetch(chains, filters, 0, limit)).map((r) => ({ ...r }));
      if (requests++ === 0) firstAnswer.push(new WeakRef(answer), ...answer.map((r) => new WeakRef(r)));
      return answer;
    };
    const options = blockWindowOptions(async () => [], { chainIds: [1, 2], start: 1000, end: 1040, limit, prefetch: 4 });
    const read: Rec[] = [];
    let droppedWhilePaging = -1;
    for await (const batch of pageWindow({ ...options, fetch })) {
      if ('done' in batch) continue;
      read.push(...batch.records);
      // Both chains page their pieces, cut from what their full first answers told.
      if (droppedWhilePaging < 0 && batch.chainId === 1 && read.length > 12) droppedWhilePaging = await collected(firstAnswer);
    }
    expect(read).toHaveLength(rows.length);
    expect(firstAnswer).toHaveLength(1 + 2 * limit);
    // The answer's array and both chains' rows are garbage: their cut keeps only the axis values of those rows.
    expect(droppedWhilePaging).toBe(1 + 2 * limit);
    expect(await collected(firstAnswer)).toBe(1 + 2 * limit);
  });
});
