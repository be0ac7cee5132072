/**
 * `insight-export sandbox`: the sandbox package's command, given what the package has not: an S3
 * client for a catalog warehouse on S3 (`--catalog-warehouse s3://bucket/prefix`). The catalog's
 * metadata files are written with the product's S3 store, its settings (S3_ENDPOINT, AWS_REGION,
 * the AWS credential chain) taken from the environment as a run takes them.
 */
import type { CommandModule } from 'yargs';
import { resolveConfig } from '../config/index.js';
import { openStore } from '../store/open-store.js';
import type { ObjectStore } from '../store/store.js';
import { InvalidDestinationError } from '../store/errors.js';

/** A writer of `s3://bucket/key` objects through the product's S3 store, one store per bucket. */
export function s3ObjectWriter(env: NodeJS.ProcessEnv = process.env): (uri: string, text: string) => Promise<void> {
  const s3 = resolveConfig({ env, configFile: null }).s3;
  const stores = new Map<string, Promise<ObjectStore>>();
  return async (uri, text) => {
    const m = /^s3:\/\/([^/]+)\/(.+)$/i.exec(uri);
    if (!m) throw new InvalidDestinationError(uri, 'is not an s3://bucket/key URI');
    const bucket = m[1]!;
    if (!stores.has(bucket)) stores.set(bucket, openStore({ kind: 's3', bucket, prefix: '' }, { s3 }));
    await (await stores.get(bucket)!).put(m[2]!, text);
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the package types its own arguments
export async function sandboxCommand(): Promise<CommandModule<any, any>> {
  const { sandboxCommandWith } = await import('@insight-export/sandbox');
  return sandboxCommandWith({ catalogWriteObject: () => Promise.resolve(s3ObjectWriter()) });
}
