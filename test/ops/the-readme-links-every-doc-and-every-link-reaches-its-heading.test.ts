/**
 * Issue 32.7: the README is for users and the rest lives in docs/. The README links to every file
 * of docs/, and every relative link of the README, docs/ and bench/ reaches an existing file and,
 * when it names one, a heading of that file (GitHub's anchors).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from './helpers.js';

const DOCS = readdirSync(join(REPO, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const DOCUMENTS = ['README.md', ...DOCS, 'bench/RESULTS.md', 'bench/experiments/README.md'];

/** Markdown without its fenced and inline code (links there are examples, not links). */
function prose(file: string): string {
  return readFileSync(join(REPO, file), 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(REPO, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map(([, h]) => anchor(h!)));
}

function links(file: string): string[] {
  return [...prose(file).matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target!).filter((t) => !/^[a-z]+:/.test(t));
}

it('the README links to every document of docs/', () => {
  expect(DOCS.length).toBeGreaterThan(0);
  const linked = new Set(links('README.md').map((t) => t.split('#')[0]));
  for (const doc of DOCS) expect(linked, `README.md links to ${doc}`).toContain(doc);
});

it('every relative link of the README, docs/ and bench/ reaches its file and heading', () => {
  const broken: string[] = [];
  for (const doc of DOCUMENTS) {
    for (const target of links(doc)) {
      const [path, hash] = target.split('#') as [string, string | undefined];
      const file = path === '' ? doc : relative(REPO, join(REPO, dirname(doc), path));
      if (!existsSync(join(REPO, file))) broken.push(`${doc}: ${target} (no file ${file})`);
      else if (hash !== undefined && file.endsWith('.md') && !anchors(file).has(hash)) broken.push(`${doc}: ${target} (no heading)`);
    }
  }
  expect(broken).toEqual([]);
});
