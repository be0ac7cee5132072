import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { parseJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { runJob } from '../../src/run/run-job.js';
import type { RunReport } from '../../src/run/report.js';
import type { Sandbox } from '@insight-export/sandbox';

export type JsonRow = Record<string, any>;

export interface ExportResult {
  report: RunReport;
  dir: string;
  /** Data files (keys relative to the destination), sorted; state and reports excluded. */
  files: string[];
  /** Rows of every NDJSON file whose key starts with `prefix` (a table), in key order. */
  rows(prefix?: string): Promise<JsonRow[]>;
}

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh temporary directory, removed after the test file. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'insight-export-test-'));
  dirs.push(dir);
  return dir;
}

export async function listFiles(root: string, sub = ''): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(path.join(root, sub), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const rel = sub ? `${sub}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(root, rel)));
    else out.push(rel);
  }
  return out.sort();
}

/**
 * Runs a job (YAML text, without `output:`) against a running sandbox into `dir` (a new temporary
 * directory by default) as uncompressed NDJSON, the way `insight-export run` does.
 */
export async function exportJob(sandbox: Sandbox, yaml: string, opts: { dir?: string; force?: boolean } = {}): Promise<ExportResult> {
  const dir = opts.dir ?? (await tempDir());
  const job = parseJob(yaml, path.join(dir, 'job.yaml'), { cwd: dir });
  const config = resolveConfig({
    job,
    env: {},
    configFile: null,
    cwd: dir,
    cliFlags: {
      baseUrl: sandbox.url,
      explorerUrl: sandbox.explorerUrl,
      destination: path.join(dir, 'out'),
      stagingDir: path.join(dir, 'staging'),
      format: 'ndjson',
      compression: 'none',
    },
  });
  const report = await runJob({ job, config, logger: silentLogger, force: opts.force });
  const out = path.join(dir, 'out');
  const files = (await listFiles(out)).filter((f) => !f.startsWith('_state/'));
  return {
    report,
    dir: out,
    files,
    async rows(prefix = '') {
      const rows: JsonRow[] = [];
      for (const f of files) {
        if (!f.startsWith(prefix)) continue;
        const text = await readFile(path.join(out, f), 'utf8');
        for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
      }
      return rows;
    },
  };
}
