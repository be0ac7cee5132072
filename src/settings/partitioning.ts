/** Validation of output partitioning templates (what they mean: src/sink/partitioning.ts). */
import { DEFAULT_PARTITIONING, PARTITION_PLACEHOLDERS } from '../sink/partitioning.js';
import type { Parsed } from './values.js';

const SEGMENT_RE = /^(?:[A-Za-z0-9_.=-]|\{[a-z_]+\})+$/;

export function parsePartitioning(input: unknown): Parsed<string> {
  if (typeof input !== 'string') return { ok: false, problem: 'is not a partitioning template' };
  const t = input.trim().replace(/\/+$/, '');
  if (t === '') return { ok: true, value: '' };
  if (t.startsWith('/')) return { ok: false, problem: 'must be relative (no leading "/")' };
  for (const seg of t.split('/')) {
    if (seg === '' || seg === '.' || seg === '..')
      return { ok: false, problem: 'has an empty, "." or ".." folder', hint: `e.g. "${DEFAULT_PARTITIONING}"` };
    if (!SEGMENT_RE.test(seg)) {
      return { ok: false, problem: `has an invalid folder "${seg}"`, hint: 'use letters, digits, "_", "-", ".", "=" and {placeholders}' };
    }
  }
  for (const m of t.matchAll(/\{([a-z_]+)\}/g)) {
    if (!(PARTITION_PLACEHOLDERS as readonly string[]).includes(m[1]!)) {
      return {
        ok: false,
        problem: `uses the unknown placeholder {${m[1]}}`,
        hint: `known: ${PARTITION_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}`,
      };
    }
  }
  return { ok: true, value: t };
}
