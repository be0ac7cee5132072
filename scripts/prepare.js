/**
 * `npm prepare`: npm runs it after `npm install` / `npm ci` in this folder, when another project
 * installs the package from this folder (`npm install <path>`) and when it installs it from a git
 * URL (npm clones, installs the dev dependencies, runs it, then packs). It builds dist/ (the
 * library's `main` and the CLI bundle, `npm run build`) when dist/index.js is missing or older than
 * a source it is built from; without it, importing the package fails with ERR_MODULE_NOT_FOUND
 * dist/index.js. A folder whose dependencies were never installed (a bare clone) cannot build: it
 * fails, saying to run `npm install` there first. A copy without sources (the image's production
 * stage) has nothing to build and is left as it is.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the build reads: a change to any of these makes dist/ stale. */
const BUILD_INPUTS = ['src', 'packages/sandbox/src', 'scripts/build.ts', 'scripts/cli-bundle.ts', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time of a file at or under p (0 when there is none). */
function newest(p) {
  if (!existsSync(p)) return 0;
  const stat = statSync(p);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let time = 0;
  for (const entry of readdirSync(p, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) time = Math.max(time, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return time;
}

/**
 * What prepare does in the package folder root: 'build' (dist/index.js missing or older than a build
 * input, the dev dependencies present), 'fresh' (dist/ is up to date, or built and nothing to
 * rebuild it with), 'no-sources' (nothing to build from) or 'no-dev-dependencies' (sources but no
 * dist/ and no tsx: `npm install` was never run in the folder).
 */
export function prepareAction(root) {
  if (!existsSync(path.join(root, 'src')) || !existsSync(path.join(root, 'scripts/build.ts'))) return 'no-sources';
  const built = path.join(root, 'dist/index.js');
  const tsx = existsSync(path.join(root, 'node_modules/tsx/dist/cli.mjs'));
  if (!existsSync(built)) return tsx ? 'build' : 'no-dev-dependencies';
  if (!tsx) return 'fresh';
  const sources = Math.max(...BUILD_INPUTS.map((p) => newest(path.join(root, p))));
  return sources > statSync(built).mtimeMs ? 'build' : 'fresh';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const action = prepareAction(root);
  if (action === 'build') {
    console.error('prepare: building dist/ (npm run build)');
    execFileSync(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, 'scripts/build.ts')], {
      cwd: root,
      stdio: 'inherit',
    });
  } else if (action === 'no-dev-dependencies') {
    console.error(
      `prepare: ${root} has no dist/ and no dev dependencies to build it: run \`npm install\` there first, then install it again`,
    );
    process.exit(1);
  } else {
    console.error(action === 'fresh' ? 'prepare: dist/ is up to date' : 'prepare: no sources, nothing to build');
  }
}
