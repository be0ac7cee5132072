import { join } from 'node:path';
import type { Plugin } from 'esbuild';

const ENTRIES: Record<string, string> = {
  '@insight-export/sandbox': 'packages/sandbox/src/index.ts',
  '@insight-export/sandbox/rpc': 'packages/sandbox/src/rpc/index.ts',
};

/**
 * For an esbuild bundle with `packages: 'external'`: the sandbox package (TypeScript in this
 * repository, not a compiled package) bundled from its entries instead, as in the CLI bundle.
 */
export function sandboxInBundle(repo: string): Plugin {
  return {
    name: 'sandbox-in-bundle',
    setup(build) {
      build.onResolve({ filter: /^@insight-export\/sandbox(\/rpc)?$/ }, (args) => ({ path: join(repo, ENTRIES[args.path]!) }));
    },
  };
}
