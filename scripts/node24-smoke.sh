#!/usr/bin/env bash
# CI's second runtime (.ci/run): the image runs Node 24, the current LTS, while machines may have only
# Node 20 (package.json's engines: >= 20.18.1). Node 24 comes from the npm registry (the `node`
# package ships the binary; nothing else is downloaded) into a temp prefix, first on the PATH, and
# runs: the README's first command (npm install && npm run demo), the tests of what differs between
# the runtimes, and a smoke export with the built CLI the image runs (dist/bin/cli.js), verified.
# Prints the Node version it ran on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
out=$(mktemp -d)
trap 'rm -rf "$prefix" "$out"' EXIT
npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error node@24 >/dev/null
export PATH="$prefix/node_modules/.bin:$PATH"
version=$(node --version)
case "$version" in v24.*) ;; *) echo "node24-smoke: expected Node 24 on the PATH, got $version" >&2; exit 1 ;; esac
echo "node24-smoke: $version"
# The README's first command (--prefer-offline: .ci/run's npm ci has just fetched every package).
npm install --prefer-offline --no-audit --no-fund && npm run demo
# What the runtimes do differently: zstd (zlib's own on 24), the package's install from a folder.
npx vitest run test/sink/zstd-is-the-runtime-zlib-where-present.test.ts test/ops/folder-install-builds-the-library.test.ts
# The image's CLI (the bundle npm install's prepare built) exports the demo job and proves it.
node dist/bin/cli.js run jobs/demo.yaml --destination "$out" --format ndjson
node dist/bin/cli.js verify jobs/demo.yaml --destination "$out" --format ndjson
echo "node24-smoke: passed on $version"
