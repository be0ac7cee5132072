/** Settings of an S3 destination: the endpoint, the region, how long failing operations are retried. */
import { z } from 'zod';
import { anyString, milliseconds, positiveDurationMs } from './parsers.js';
import { checked, type Setting } from './setting.js';
import { parseBaseUrl } from './values.js';

export const S3_SETTINGS = {
  's3.endpoint': {
    key: 's3.endpoint',
    flag: { name: 's3-endpoint', type: 'string', for: ['job'] },
    env: ['AWS_ENDPOINT_URL_S3', 'S3_ENDPOINT'],
    parse: (v) => parseBaseUrl(v, false),
    file: () => checked(z.string(), (v) => parseBaseUrl(v, false)),
    doc: 'S3-compatible endpoint (radosgw, MinIO ...); S3_ENDPOINT wins over AWS_ENDPOINT_URL_S3.',
    places: ['config', 'env', 'flag'],
  },
  's3.region': {
    key: 's3.region',
    flag: { name: 'region', type: 'string', for: ['job'] },
    env: ['AWS_DEFAULT_REGION', 'AWS_REGION'],
    parse: anyString,
    file: () => z.string().min(1),
    doc: 'AWS region; AWS_REGION wins over AWS_DEFAULT_REGION.',
    places: ['config', 'env', 'flag'],
  },
  's3.retry_budget_ms': {
    key: 's3.retry_budget_ms',
    fileKey: 's3.retry_budget',
    flag: { name: 's3-retry-budget', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_S3_RETRY_BUDGET'],
    parse: positiveDurationMs,
    file: () => checked(z.string(), positiveDurationMs),
    default: () => 30_000,
    defaultText: '30s',
    show: milliseconds,
    doc: 'How long S3 operations are retried while the store is unreachable or answers 5xx, e.g. 30s.',
    places: ['config', 'env', 'flag'],
  },
} as const satisfies Record<string, Setting>;
