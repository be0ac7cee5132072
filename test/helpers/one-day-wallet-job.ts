import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** Writes `job.yaml` in `dir`: one wallet's transactions on chain 1 over 2024-02-01, no destination (the test gives it). */
export async function writeOneDayWalletJob(dir: string, wallet: string): Promise<string> {
  const file = join(dir, 'job.yaml');
  await writeFile(
    file,
    stringify({
      name: 'dest',
      source: { chains: [1] },
      targets: [{ wallet, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-02' },
    }),
  );
  return file;
}
