/** Settings of the run itself: its staging directory, how it stops, its log, its range from flags, a dry run. */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { directory, flagBoolean, durationSetting, choiceSetting, rangePoint } from './parsers.js';
import { checked, SOURCE_AND_JOB, type Setting } from './setting.js';
import { parseDurationMs } from './values.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const RUN_SETTINGS = {
  staging_dir: {
    key: 'staging_dir',
    flag: { name: 'staging-dir', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_STAGING_DIR'],
    parse: directory,
    file: (cwd) => checked(z.string().min(1), (v) => directory(v, cwd)),
    default: () => path.join(os.tmpdir(), 'insight-export'),
    defaultText: '<os tmpdir>/insight-export',
    doc: 'Local directory for files being written.',
    places: ['config', 'env', 'flag'],
  },
  stop_grace_ms: {
    key: 'stop_grace_ms',
    fileKey: 'stop_grace',
    flag: { name: 'stop-grace', type: 'string', for: ['run'] },
    env: ['INSIGHT_EXPORT_STOP_GRACE'],
    ...durationSetting(parseDurationMs, 25_000, '25s'),
    doc: 'After SIGINT/SIGTERM a run sends no new request and commits, for this long, what it has wholly received (batches whose pages are all in, the received part of the others); then it abandons the rest and exits 130. Default 25s, within Kubernetes\' default terminationGracePeriodSeconds (30); "0s" abandons everything in flight at once. A second signal stops at once.',
    places: ['config', 'env', 'flag'],
  },
  log_level: {
    key: 'log_level',
    flag: { name: 'log-level', type: 'string', for: SOURCE_AND_JOB, choices: LOG_LEVELS },
    env: ['INSIGHT_EXPORT_LOG_LEVEL'],
    ...choiceSetting(LOG_LEVELS),
    default: (): LogLevel => 'info',
    defaultText: 'info',
    doc: 'Least severe log line written (stderr).',
    places: ['config', 'env', 'flag'],
  },
  log_format: {
    key: 'log_format',
    flag: { name: 'log-format', type: 'string', for: SOURCE_AND_JOB, choices: LOG_FORMATS },
    env: ['INSIGHT_EXPORT_LOG_FORMAT'],
    ...choiceSetting(LOG_FORMATS),
    default: (): LogFormat => (process.stderr.isTTY === true ? 'pretty' : 'json'),
    defaultText: 'pretty on a terminal, json otherwise',
    doc: 'Log lines on stderr: "pretty" (for people) or "json" (one object a line, for log collectors).',
    places: ['config', 'env', 'flag'],
  },
  'range.from': {
    key: 'range.from',
    flag: { name: 'from', type: 'string', for: ['run'] },
    parse: rangePoint,
    doc: 'Start (inclusive): a block number, or a UTC date/time.',
    places: ['job', 'flag'],
  },
  'range.to': {
    key: 'range.to',
    flag: { name: 'to', type: 'string', for: ['run'] },
    parse: rangePoint,
    doc: 'End (exclusive): a block number, a UTC date/time, or "latest" (chain head minus safety_lag, for incremental cron runs).',
    places: ['job', 'flag'],
  },
  dry_run: {
    key: 'dry_run',
    flag: { name: 'dry-run', type: 'boolean', for: ['write'] },
    parse: flagBoolean,
    default: () => false,
    defaultText: 'false',
    doc: 'Check and plan everything (job, config, destination, chains) but write nothing; print what would be written.',
    places: ['flag'],
  },
} as const satisfies Record<string, Setting>;
