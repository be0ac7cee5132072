/**
 * Issue 45.9: Node 20 reached end of life on 30 April 2026 and the image still named it. The image
 * is built on the current LTS (24); the package keeps working where a machine has only Node 20
 * (engines >= 20.18.1). CI (.ci/run) runs the suite on the machine's Node and a smoke export on
 * Node 24 from the npm registry; here, what the files say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from './helpers.js';

const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));

it('the image is built and run on Node 24, both stages', () => {
  expect(/^ARG NODE_VERSION=(\d+)/m.exec(dockerfile)?.[1]).toBe('24');
  const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
  expect(froms).toHaveLength(2);
  for (const from of froms) expect(from).toBe('node:${NODE_VERSION}-bookworm-slim');
});

it('the package still declares Node 20.18.1 and later, which the image satisfies', () => {
  expect(pkg.engines.node).toBe('>=20.18.1');
});

it('CI prints both Node versions it ran and runs a smoke export on Node 24 from the npm registry', () => {
  const ci = readFileSync(join(REPO, '.ci/run'), 'utf8');
  expect(ci).toMatch(/^bash scripts\/node24-smoke\.sh/m);
  expect(ci).toMatch(/Node versions run: \$machine_node .*\$\{node24/);
  const smoke = readFileSync(join(REPO, 'scripts/node24-smoke.sh'), 'utf8');
  expect(smoke).toMatch(/npm install --prefix "\$prefix" .*node@24/);
  expect(smoke).toMatch(/node dist\/bin\/cli\.js run /);
});
