/**
 * Vitest globalSetup: a folder for the run's one test build of the CLI (test/reliability/harness.ts
 * buildTestCli: the first test file that needs it builds it there, the others wait for it and reuse
 * it). Inside the repository's node_modules so that packages resolve and the CLI, walking up to
 * the repository's package.json (src/package-root.ts), finds config/default.yaml. Teardown removes it.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    testCliDir: string;
  }
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(path.join(REPO, 'node_modules', `.insight-export-test-${process.pid}-`));
  project.provide('testCliDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
