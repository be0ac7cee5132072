/** What a zod schema allows where: the schemas and keys at a path of the file, and where each key belongs. */
import type { z } from 'zod';
import { formatFieldPath, type FieldPath } from './yaml-doc.js';

export type AnySchema = z.core.$ZodType;

export function unwrap(schema: AnySchema | undefined): AnySchema | undefined {
  let s = schema;
  for (let i = 0; i < 20 && s; i++) {
    const def = s._zod.def as unknown as Record<string, unknown> & { type: string };
    if (['optional', 'default', 'nullable', 'readonly', 'catch', 'prefault', 'nonoptional'].includes(def.type))
      s = def.innerType as AnySchema;
    else if (def.type === 'pipe') s = def.in as AnySchema;
    else if (def.type === 'lazy') s = (def.getter as () => AnySchema)();
    else return s;
  }
  return s;
}

export function defOf(s: AnySchema | undefined): (Record<string, unknown> & { type: string }) | undefined {
  return s?._zod.def as unknown as (Record<string, unknown> & { type: string }) | undefined;
}

/** Schemas that may apply at `path` (several inside unions). */
export function schemasAt(schema: AnySchema, path: FieldPath): AnySchema[] {
  let current: AnySchema[] = [schema];
  for (const seg of path) {
    const next: AnySchema[] = [];
    const expand = (s: AnySchema | undefined) => {
      const u = unwrap(s);
      const def = defOf(u);
      if (!u || !def) return;
      if (def.type === 'union') for (const o of def.options as AnySchema[]) expand(o);
      else if (def.type === 'object' && typeof seg === 'string') {
        const child = (def.shape as Record<string, AnySchema>)[seg];
        if (child) next.push(child);
      } else if (def.type === 'array' && typeof seg === 'number') next.push(def.element as AnySchema);
      else if (def.type === 'record') next.push(def.valueType as AnySchema);
    };
    current.forEach(expand);
    current = next;
  }
  return current;
}

export function keysAt(schema: AnySchema, path: FieldPath): string[] {
  const keys = new Set<string>();
  const collect = (s: AnySchema | undefined) => {
    const u = unwrap(s);
    const def = defOf(u);
    if (!def) return;
    if (def.type === 'union') for (const o of def.options as AnySchema[]) collect(o);
    if (def.type === 'object') for (const k of Object.keys(def.shape as object)) keys.add(k);
  };
  schemasAt(schema, path).forEach(collect);
  return [...keys];
}

/** Every object key of the schema with the paths where it is allowed ("chunk" -> ["range"]). */
export function allKeyPaths(schema: AnySchema): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const seen = new Set<AnySchema>();
  const visit = (s: AnySchema | undefined, path: FieldPath) => {
    const u = unwrap(s);
    const def = defOf(u);
    if (!u || !def || seen.has(u)) return;
    seen.add(u);
    if (def.type === 'union') for (const o of def.options as AnySchema[]) visit(o, path);
    if (def.type === 'array') visit(def.element as AnySchema, [...path, 0]);
    if (def.type === 'object') {
      for (const [k, child] of Object.entries(def.shape as Record<string, AnySchema>)) {
        const parent = formatFieldPath(path).replace(/\[0\]/g, '[]') || '(top level)';
        out.set(k, [...(out.get(k) ?? []), parent]);
        visit(child, [...path, k]);
      }
    }
  };
  visit(schema, []);
  return out;
}

/** The branches of the unions at `path`. */
export function unionBranches(schema: AnySchema, path: FieldPath): AnySchema[] {
  return schemasAt(schema, path)
    .map(unwrap)
    .flatMap((s) => (defOf(s)?.type === 'union' ? (defOf(s)!.options as AnySchema[]) : []));
}
