#!/usr/bin/env bash
# `npm test`'s pretest step: the type check, lint and format check, and the install of what the
# tests need besides npm packages (scripts/install-test-deps.sh), side by side: each is mostly one
# core or the network, and in a row they took ~1.5 min of the suite's 10. Each one's output is
# printed whole when it ends; the step fails if any of them fails, naming it.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

declare -A pids=()
start() {
  local name=$1
  shift
  "$@" >"$out/$name" 2>&1 &
  pids[$name]=$!
}
start typecheck npm run --silent typecheck
start lint npm run --silent lint
start format npm run --silent format:check
start test-deps bash scripts/install-test-deps.sh

failed=()
for name in typecheck lint format test-deps; do
  if wait "${pids[$name]}"; then
    echo "pretest: $name passed"
  else
    echo "pretest: $name FAILED:" >&2
    failed+=("$name")
  fi
  grep -v 'Unknown user config' "$out/$name" >&2 || true
done
if ((${#failed[@]})); then
  echo "pretest: failed: ${failed[*]} (each one's output is above)" >&2
  exit 1
fi
