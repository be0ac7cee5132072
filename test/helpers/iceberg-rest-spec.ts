/**
 * Checks requests to and answers of an Iceberg REST catalog against the protocol's own OpenAPI
 * description (test/fixtures/iceberg-rest/rest-catalog-open-api.yaml: open-api/rest-catalog-open-api.yaml
 * of apache/iceberg at 7f879b11366e17a676a03f15247a821751415529), with Ajv's JSON Schema 2020-12
 * validator (OpenAPI 3.1 schemas are JSON Schema 2020-12).
 *
 * Two things of OpenAPI that JSON Schema does not do are done here: a response named by reference
 * (`$ref: '#/components/responses/...'`) is looked up, and a `discriminator` whose base schema
 * lists no oneOf (TableRequirement, BaseUpdate, ContentFile) becomes a oneOf over its mapping, so
 * that `{"type": "assert-ref-snapshot-id"}` is checked as an AssertRefSnapshotId, not only as an
 * object with a string `type`. `nullable` (OpenAPI 3.0) is not a 2020-12 keyword: ignored.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import type { CatalogExchange } from '@insight-export/sandbox';

type Schema = Record<string, unknown>;
const SPEC_FILE = fileURLToPath(new URL('../fixtures/iceberg-rest/rest-catalog-open-api.yaml', import.meta.url));

interface Operation {
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Schema>;
}

/** The component schemas with each mapping-only discriminator turned into a oneOf over its mapping. */
function withDiscriminatorsAsOneOf(schemas: Record<string, Schema>): Record<string, Schema> {
  const out: Record<string, Schema> = structuredClone(schemas);
  for (const [name, schema] of Object.entries(schemas)) {
    const mapping = (schema.discriminator as { mapping?: Record<string, string> } | undefined)?.mapping;
    if (!mapping || schema.oneOf || schema.anyOf) continue;
    const base = `${name}Base`;
    out[base] = { ...schema, discriminator: undefined };
    delete out[base]!.discriminator;
    const ref = `#/components/schemas/${name}`;
    for (const target of Object.values(mapping)) {
      const sub = out[target.split('/').at(-1)!]!;
      sub.allOf = (sub.allOf as Schema[] | undefined)?.map((s) => (s.$ref === ref ? { $ref: `#/components/schemas/${base}` } : s));
    }
    out[name] = { oneOf: Object.values(mapping).map(($ref) => ({ $ref })) };
  }
  return out;
}

export class IcebergRestSpec {
  private readonly spec: { paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, Schema>> };
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    this.spec = parse(readFileSync(SPEC_FILE, 'utf8'));
    this.ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, validateFormats: false });
    const components = { ...this.spec.components, schemas: withDiscriminatorsAsOneOf(this.spec.components.schemas!) };
    this.ajv.addSchema({ $id: 'spec', components });
  }

  /** The spec's operation for a method and a path below the catalog root (`/v1/...`), and its template. */
  operation(method: string, path: string, prefix: string | undefined): { template: string; op: Operation } | null {
    const segs = path.split('/').slice(1);
    const withPrefix = prefix === undefined ? segs : [segs[0]!, ...segs.slice(2)];
    for (const [template, ops] of Object.entries(this.spec.paths)) {
      const t = template.split('/').slice(1);
      const tt = t[1] === '{prefix}' ? [t[0]!, ...t.slice(2)] : t;
      const candidate = t[1] === '{prefix}' ? withPrefix : segs;
      if (tt.length !== candidate.length || !tt.every((p, i) => p.startsWith('{') || p === candidate[i])) continue;
      const op = ops[method.toLowerCase()];
      if (op) return { template, op };
    }
    return null;
  }

  /**
   * The validator of the schema at a JSON pointer into the spec. Schemas under components are
   * compiled by reference; one written inline under paths is compiled as a copy whose references
   * point into the spec (a reference into paths would carry the templates' braces).
   */
  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (v) return v;
    if (pointer.startsWith('/components/')) v = this.ajv.compile({ $ref: `spec#${pointer}` });
    else {
      let node: unknown = this.spec;
      for (const p of pointer.split('/').slice(1)) node = (node as Record<string, unknown>)[p.replaceAll('~1', '/').replaceAll('~0', '~')];
      v = this.ajv.compile(JSON.parse(JSON.stringify(node).replaceAll('"$ref":"#/', '"$ref":"spec#/')) as Schema);
    }
    this.compiled.set(pointer, v);
    return v;
  }

  private check(pointer: string, value: unknown, what: string): string[] {
    const v = this.validator(pointer);
    if (v(value)) return [];
    return [`${what} does not match ${pointer}: ${this.ajv.errorsText(v.errors, { separator: '; ' })}`];
  }

  /** The JSON pointer of the schema of a response (its $ref to components/responses followed). */
  private responsePointer(op: Operation, template: string, method: string, status: number): string | null {
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => op.responses[k] !== undefined);
    if (key === undefined) return null;
    let response = op.responses[key]!;
    let pointer = `/paths/${template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/responses/${key}`;
    const ref = response.$ref as string | undefined;
    if (ref) {
      pointer = ref.slice(1);
      response = this.spec.components.responses![ref.split('/').at(-1)!]!;
    }
    const content = response.content as Record<string, { schema: Schema }> | undefined;
    if (!content) return '';
    const type = Object.keys(content)[0]!;
    return `${pointer}/content/${type.replaceAll('/', '~1')}/schema`;
  }

  /** Every way a request or its answer departs from the spec (empty: both conform). */
  problems(e: CatalogExchange, prefix?: string): string[] {
    const found: string[] = [];
    const name = `${e.method} ${e.path}`;
    const matched = this.operation(e.method, e.path, prefix);
    if (!matched) {
      // A path the spec does not have (e.g. one without the prefix the catalog requires): a 404 in the spec's error shape.
      if (e.status !== 404) found.push(`${name}: no operation of the spec, answered ${e.status} (not 404)`);
      return [...found, ...this.check('/components/schemas/IcebergErrorResponse', e.response, `answer ${e.status} of ${name}`)];
    }
    const { template, op } = matched;
    if (op.requestBody && e.request !== undefined) {
      const type = Object.keys(op.requestBody.content)[0]!;
      const pointer = `/paths/${template.replaceAll('/', '~1')}/${e.method.toLowerCase()}/requestBody/content/${type.replaceAll('/', '~1')}/schema`;
      found.push(...this.check(pointer, e.request, `request of ${name}`));
    }
    const pointer = this.responsePointer(op, template, e.method, e.status);
    if (pointer === null) found.push(`${name}: status ${e.status} is not an answer the spec lists`);
    else if (pointer === '' && e.response !== undefined) found.push(`${name}: ${e.status} has a body the spec does not describe`);
    else if (pointer !== '' && e.method !== 'HEAD') found.push(...this.check(pointer, e.response, `answer ${e.status} of ${name}`));
    return found;
  }
}
