# Reads Iceberg manifests or manifest lists with fastavro against a spec schema
# (test/iceberg/fixtures/*.avsc); called by readWithSpecSchema in iceberg.ts.
#
#   python3 read-avro-with-spec-schema.py <spec.avsc> <file.avro>...
#
# Prints, per file, its key-value metadata, where its writer schema departs from the spec's (a
# required field missing, another field id, type or required-ness, a field the spec lacks), and its
# records as read with the spec's schema as the reader schema (Avro schema resolution).
import copy
import base64
import datetime
import json
import sys

import fastavro

# Iceberg types of partition values as Avro types (apache/iceberg format/spec.md, Appendix A).
AVRO = {
    'int': 'int',
    'long': 'long',
    'string': 'string',
    'boolean': 'boolean',
    'date': {'type': 'int', 'logicalType': 'date'},
}


def with_partition(schema, meta):
    # The spec's schema with the partition struct (r102) of the manifest's own partition spec.
    if 'partition-spec' not in meta:
        return schema
    table = {f['id']: f['type'] for f in json.loads(meta['schema'])['fields']}
    fields = []
    for p in json.loads(meta['partition-spec']):
        # The day transform gives a date (readers also take an int: format/spec.md, Partition Transforms).
        t = 'date' if p['transform'] == 'day' else table[p['source-id']]
        if p['transform'] not in ('day', 'identity'):
            raise SystemExit(f"transform {p['transform']} not covered here")
        fields.append({'name': p['name'], 'type': ['null', AVRO[t]], 'default': None, 'field-id': p['field-id']})
    out = copy.deepcopy(schema)
    data_file = next(f for f in out['fields'] if f['name'] == 'data_file')['type']
    next(f for f in data_file['fields'] if f['name'] == 'partition')['type']['fields'] = fields
    return out


def split(t):
    # (optional, the type without its null branch)
    if isinstance(t, list):
        rest = [x for x in t if x != 'null']
        return ('null' in t, rest[0] if len(rest) == 1 else rest)
    return (False, t)


def required_word(optional):
    return 'optional' if optional else 'required'


def compare(s, w, at, problems):
    # The writer's type w against the spec's type s.
    st = s['type'] if isinstance(s, dict) else s
    wt = w['type'] if isinstance(w, dict) else w
    if st != wt:
        problems.append(f'{at}: type {json.dumps(w)} where the spec has {json.dumps(s)}')
    elif st == 'record':
        check_fields(s, w, at, problems)
    elif st == 'array':
        for key in ('element-id', 'logicalType'):
            if s.get(key) != w.get(key):
                problems.append(f'{at}: {key} {w.get(key)} where the spec has {s.get(key)}')
        so, si = split(s['items'])
        wo, wi = split(w['items'])
        if so != wo:
            problems.append(f'{at}: elements {required_word(wo)} where the spec has them {required_word(so)}')
        compare(si, wi, f'{at}[]', problems)
    elif isinstance(w, dict) and 'logicalType' in w and (not isinstance(s, dict) or s.get('logicalType') != w['logicalType']):
        problems.append(f'{at}: logical type {w["logicalType"]} where the spec has {json.dumps(s)}')


def check_fields(s, w, at, problems):
    written = {f['name']: f for f in w['fields']}
    for f in s['fields']:
        where = f'{at}.{f["name"]}' if at else f['name']
        so, st = split(f['type'])
        g = written.pop(f['name'], None)
        if g is None:
            if not so:
                problems.append(f'{where}: required by the spec, missing')
            continue
        if g.get('field-id') != f['field-id']:
            problems.append(f'{where}: field id {g.get("field-id")} where the spec has {f["field-id"]}')
        wo, wt = split(g['type'])
        if wo != so:
            problems.append(f'{where}: {required_word(wo)} where the spec has it {required_word(so)}')
        compare(st, wt, where, problems)
    for name in written:
        problems.append(f'{at}.{name}: not in the spec' if at else f'{name}: not in the spec')


def plain(v):
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    return v


spec = json.load(open(sys.argv[1]))
out = {}
for path in sys.argv[2:]:
    with open(path, 'rb') as f:
        r = fastavro.reader(f)
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.metadata.items() if not k.startswith('avro.')}
        written = json.loads(r.metadata['avro.schema'])
    reader_schema = with_partition(spec, meta)
    problems = []
    check_fields(reader_schema, written, '', problems)
    with open(path, 'rb') as f:
        records = [plain(x) for x in fastavro.reader(f, reader_schema=reader_schema)]
    out[path] = {'metadata': meta, 'problems': problems, 'records': records}
print(json.dumps(out))
