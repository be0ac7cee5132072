import type { ListDataset, WindowRequest } from '../../src/datasets/dataset.js';
import type { InsightClient } from '../../src/source/client.js';

/** The window stream of a dataset collected as a streamed window (aggregates, NFT holdings). */
export function streamedWindow<Target, Rec>(dataset: ListDataset<Target, Rec>, client: InsightClient, target: Target, req: WindowRequest) {
  if (dataset.collection.kind !== 'streamed') throw new Error(`${dataset.name} is collected by pages, not a streamed window`);
  return dataset.collection.streamWindow(client, target, req);
}
