#!/usr/bin/env node
/**
 * The `insight-export` bin. It runs the built CLI (dist/bin/cli.js, `npm run build`) when that is
 * at least as new as every file under src/; otherwise, in a checkout (src/ and the dev dependency
 * tsx present), the TypeScript sources, as `npm run cli` does. So `npx insight-export` works right
 * after `npm install`, and never runs a build older than the sources beside it. An installed
 * package without tsx runs its build.
 * Both modules run the CLI on import when argv[1] names a cli.js or cli.ts: this file's name keeps
 * that true.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

// Node >= 22.1 keeps the code it compiles on disk and reuses it at the next start (the build and the
// packages it loads); Node 20 has no such cache and starts as before.
nodeModule.enableCompileCache?.();

const root = fileURLToPath(new URL('..', import.meta.url));
const built = `${root}dist/bin/cli.js`;
const sources = `${root}src`;

/** The newest modification time of a file under dir (0 when there is none). */
function newest(dir) {
  let time = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) time = Math.max(time, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs);
  }
  return time;
}

async function tsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return null;
  }
}

const hasBuild = existsSync(built);
const hasSources = existsSync(`${sources}/cli.ts`);
const buildIsCurrent = hasBuild && (!hasSources || statSync(built).mtimeMs >= newest(sources));
const loader = buildIsCurrent || !hasSources ? null : await tsx();
if (loader) {
  loader.register();
  await import(`${sources}/cli.ts`);
} else if (hasBuild) {
  await import(built);
} else {
  process.stderr.write(
    'error: insight-export is not built and cannot run its sources\nhint: run `npm install` (with dev dependencies), or `npm run build`\n',
  );
  process.exitCode = 2;
}
