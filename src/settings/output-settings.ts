/** Settings of the output files: format, compression, writer, destination, layout, file sizes and batching of windows. */
import { z } from 'zod';
import { parsePartitioning } from './partitioning.js';
import { choiceSetting, intIn } from './parsers.js';
import { ALL, checked, type Setting } from './setting.js';
import { parseFileSizeLimit } from './file-size-limit.js';
import { BYTE_SIZE_ERROR, BYTE_SIZE_PATTERN, parseDestination, type Destination } from './values.js';
import { DEFAULT_PARTITIONING, PARTITION_PLACEHOLDERS } from '../sink/partitioning.js';
import {
  COMPRESSIONS,
  compressionsText,
  DEFAULT_FORMAT,
  defaultCompression,
  DEFAULT_PARQUET_ENGINE,
  OUTPUT_FORMATS,
  PARQUET_ENGINES,
} from '../sink/formats.js';

export const BATCH_WINDOWS = ['on', 'off'] as const;
export type BatchWindows = (typeof BATCH_WINDOWS)[number];
/** Blocks a batch of block windows spans at most (src/run/window-batches.ts): the default block chunk. */
export const BLOCK_BATCH_SPAN = 10_000;

export const OUTPUT_SETTINGS = {
  'output.format': {
    key: 'output.format',
    flag: { name: 'format', type: 'string', for: ['job'], choices: OUTPUT_FORMATS },
    ...choiceSetting(OUTPUT_FORMATS),
    default: () => DEFAULT_FORMAT,
    defaultText: DEFAULT_FORMAT,
    doc: 'File format: "parquet" (default), "ndjson" (one JSON object per line) or "iceberg" (an Iceberg v2 table per dataset table, Parquet data files).',
    places: ['config', 'job', 'flag'],
  },
  'output.compression': {
    key: 'output.compression',
    flag: { name: 'compression', type: 'string', for: ['job'], choices: COMPRESSIONS },
    ...choiceSetting(COMPRESSIONS),
    defaultFrom: { key: 'output.format', value: defaultCompression },
    defaultText: 'zstd for Parquet, gzip for NDJSON',
    doc: `Compression: Parquet ${compressionsText('parquet')}; NDJSON ${compressionsText('ndjson')}.`,
    places: ['config', 'job', 'flag'],
  },
  'output.parquet_engine': {
    key: 'output.parquet_engine',
    flag: { name: 'parquet-engine', type: 'string', for: ['job'], choices: PARQUET_ENGINES },
    ...choiceSetting(PARQUET_ENGINES),
    default: () => DEFAULT_PARQUET_ENGINE,
    defaultText: DEFAULT_PARQUET_ENGINE,
    doc: 'Parquet writer: "duckdb" (default, fastest) or "hyparquet" (pure JavaScript). Ignored for NDJSON.',
    places: ['config', 'job', 'flag'],
  },
  'output.destination': {
    key: 'output.destination',
    flag: { name: 'destination', type: 'string', alias: 'd', for: ['job'] },
    env: ['INSIGHT_EXPORT_DESTINATION'],
    parse: (v, cwd) => parseDestination(v, cwd),
    file: (cwd, jobDir) => checked(z.string(), (v) => parseDestination(v, cwd, jobDir)),
    show: (d: Destination) => d.url,
    doc: 'Where files go: "s3://bucket/prefix" or a local directory ("./out"; a relative path is taken from the working directory of the run; in a job file, "{job_dir}/out" from the job file\'s folder).',
    places: ALL,
  },
  'output.partitioning': {
    key: 'output.partitioning',
    flag: { name: 'partitioning', type: 'string', for: ['job'] },
    parse: parsePartitioning,
    file: () => checked(z.string(), parsePartitioning),
    default: () => DEFAULT_PARTITIONING,
    defaultText: `"${DEFAULT_PARTITIONING}"`,
    doc: `Folder layout of data files under the destination, Hive style. Placeholders: ${PARTITION_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}. Default "${DEFAULT_PARTITIONING}".`,
    places: ['config', 'job', 'flag'],
  },
  'output.max_rows_per_file': {
    key: 'output.max_rows_per_file',
    flag: { name: 'max-rows-per-file', type: 'number', for: ['job'] },
    parse: intIn(1, Number.MAX_SAFE_INTEGER),
    file: () => z.number().int().positive(),
    default: () => 1_000_000,
    defaultText: '1000000',
    doc: 'Start a new file after this many rows. Default 1000000.',
    places: ['config', 'job', 'flag'],
  },
  'output.max_bytes_per_file': {
    key: 'output.max_bytes_per_file',
    flag: { name: 'max-bytes-per-file', type: 'string', for: ['job'] },
    parse: parseFileSizeLimit,
    file: () =>
      checked(
        z.union([z.number().int().positive(), z.string().regex(new RegExp(BYTE_SIZE_PATTERN), { error: BYTE_SIZE_ERROR })]),
        parseFileSizeLimit,
      ),
    default: () => 512_000_000,
    defaultText: '512MB',
    doc: 'Start a new file after about this many bytes: "512MB" (KB/MB/GB = 1000^n), "256MiB" (KiB/MiB/GiB = 1024^n) or a number of bytes; at least 1MB (a file is cut between pages of rows). Default "512MB".',
    places: ['config', 'job', 'flag'],
  },
  'output.batch_windows': {
    key: 'output.batch_windows',
    flag: { name: 'batch-windows', type: 'string', for: ['job'], choices: BATCH_WINDOWS },
    ...choiceSetting(BATCH_WINDOWS),
    default: () => 'on' as BatchWindows,
    defaultText: 'on',
    doc: `"on" (default): consecutive windows of a unit within one UTC day (windows by time) or one span of ${BLOCK_BATCH_SPAN.toLocaleString('en-US')} blocks (by block) are exported as one, written to one file per partition and committed together. "off": every window on its own, in files of its own.`,
    places: ['config', 'job', 'flag'],
  },
} as const satisfies Record<string, Setting>;
