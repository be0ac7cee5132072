import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JOB_SCHEMA_FILE, renderJobSchema } from '../../src/job/write-schema.js';

interface Node {
  properties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
  description?: string;
  additionalProperties?: unknown;
  type?: string;
}

describe('schema/job.schema.json', () => {
  it('equals the schema generated from the zod definition (run `npm run schema` after changing it)', () => {
    expect(readFileSync(JOB_SCHEMA_FILE, 'utf8')).toBe(renderJobSchema());
  });

  it('documents every field and refuses unknown keys', () => {
    const schema = JSON.parse(renderJobSchema()) as Node;
    const undocumented: string[] = [];
    const open: string[] = [];
    const walk = (n: Node | undefined, at: string) => {
      if (!n) return;
      if (n.type === 'object' && n.properties && n.additionalProperties !== false) open.push(at || '(root)');
      for (const [k, v] of Object.entries(n.properties ?? {})) {
        if (!v.description) undocumented.push(`${at}.${k}`);
        walk(v, `${at}.${k}`);
      }
      walk(n.items, `${at}[]`);
      for (const x of n.anyOf ?? []) walk(x, at);
    };
    walk(schema, '');
    expect(undocumented).toEqual([]);
    expect(open).toEqual([]);
    expect(Object.keys(schema.properties ?? {})).toEqual(
      expect.arrayContaining(['name', 'source', 'targets', 'aggregates', 'range', 'filters', 'decode', 'output', 'concurrency', 'retries']),
    );
  });
});
