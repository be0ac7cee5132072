import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { JobFileError } from '../../src/job/errors.js';
import { loadJob } from '../../src/job/load.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('load-job-');
beforeAll(() => {
  mkdirSync(path.join(tmp.dir, 'abi'));
  writeFileSync(path.join(tmp.dir, 'abi', 'ok.json'), JSON.stringify([{ type: 'event', name: 'X', inputs: [] }]));
  writeFileSync(path.join(tmp.dir, 'abi', 'bad.json'), '{ not json');
});

function jobText(abi: string) {
  return `name: l
source: { base_url: sandbox, chains: [1] }
targets:
  - contract: "0x2222222222222222222222222222222222222222"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
    abi: ${abi}
range: { from: 1, to: 2 }
`;
}

async function loadFailure(file: string): Promise<JobFileError> {
  try {
    await loadJob(file);
  } catch (err) {
    if (err instanceof JobFileError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('loadJob', () => {
  it('loads a job and resolves its ABI path next to the job file', async () => {
    const f = path.join(tmp.dir, 'ok.yaml');
    writeFileSync(f, jobText('./abi/ok.json'));
    const job = await loadJob(f);
    expect(job.jobFile).toBe(f);
    expect(job.targets[0]!.kind === 'contract' && job.targets[0]!.abi).toBe(path.join(tmp.dir, 'abi', 'ok.json'));
  });

  it('reports a missing or unreadable ABI file at the abi field', async () => {
    const missing = path.join(tmp.dir, 'missing.yaml');
    writeFileSync(missing, jobText('./abi/nope.json'));
    const e1 = await loadFailure(missing);
    expect([e1.line, e1.column, e1.field]).toEqual([6, 10, 'targets[0].abi']);
    expect(e1.message).toMatch(/cannot be read/);

    const bad = path.join(tmp.dir, 'bad.yaml');
    writeFileSync(bad, jobText('./abi/bad.json'));
    const e2 = await loadFailure(bad);
    expect(e2.line).toBe(6);
    expect(e2.message).toMatch(/is not JSON/);
  });

  it('reports a job file that does not exist', async () => {
    const e = await loadFailure(path.join(tmp.dir, 'absent.yaml'));
    expect(e.message).toMatch(/absent\.yaml:1:1 no such file/);
  });
});
