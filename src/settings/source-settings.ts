/**
 * Settings of where a run's settings and data come from: the config file, the read interface
 * (its URLs, how long its answers may still change) and its credentials.
 */
import { z } from 'zod';
import { MAX_CHAIN_IDS } from '../source/query.js';
import { anyString, directory, durationSetting, wholeNumberSetting } from './parsers.js';
import { ALL, checked, SOURCE_AND_JOB, type Setting } from './setting.js';
import { parseBaseUrl, parseDurationMs } from './values.js';

export const SOURCE_SETTINGS = {
  config_file: {
    key: 'config_file',
    flag: { name: 'config', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPORT_CONFIG'],
    parse: directory,
    doc: 'Config file replacing the packaged config/default.yaml.',
    places: ['env', 'flag'],
  },
  'source.base_url': {
    key: 'source.base_url',
    flag: { name: 'base-url', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_BASE_URL'],
    parse: (v) => parseBaseUrl(v, true),
    file: () => checked(z.string(), (v) => parseBaseUrl(v, true)),
    doc: 'Read-interface base URL including its path prefix (e.g. "http://127.0.0.1:8787/insights/v1"), or "sandbox" to start the built-in sandbox in-process. Default: config / INSIGHT_BASE_URL.',
    places: ALL,
  },
  'source.explorer_url': {
    key: 'source.explorer_url',
    flag: { name: 'explorer-url', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPLORER_URL'],
    parse: (v) => parseBaseUrl(v, false),
    file: () => checked(z.string(), (v) => parseBaseUrl(v, false)),
    doc: 'Base URL of the explorer pass-through (NFT holdings). Default: config / INSIGHT_EXPLORER_URL.',
    places: ALL,
  },
  'source.settle_horizon_ms': {
    key: 'source.settle_horizon_ms',
    fileKey: 'source.settle_horizon',
    flag: { name: 'settle-horizon', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_SETTLE_HORIZON'],
    ...durationSetting(parseDurationMs, 86_400_000, '1d'),
    doc: "How long after a block's time the service may still answer differently for it (a lagging replica, a back-fill): a window committed by a run is recounted (one count per window batch and target for up to source.chain_ids_per_request chains) by the next run, and by later runs until its block time is older than this; a window whose count differs is exported again. Default 1d; 0s: recounted once.",
    places: ALL,
  },
  'source.chain_ids_per_request': {
    key: 'source.chain_ids_per_request',
    flag: { name: 'chain-ids-per-request', type: 'number', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPORT_CHAIN_IDS_PER_REQUEST'],
    ...wholeNumberSetting(1, MAX_CHAIN_IDS),
    default: () => MAX_CHAIN_IDS,
    defaultText: String(MAX_CHAIN_IDS),
    doc: "Most chain ids one request names (the contract's limit, 55, by default; the hosted service's own client documents 50): list pages, count requests (settle, verify --recount) and resolve requests (the blocks dataset, wallet names) are batched by it, and plan estimates from it. A request the service refuses for its number of chains (a 400 saying so) is sent again split in halves, and the run keeps the halved number for its later batches: logged once.",
    places: ALL,
  },
  'auth.client_id': {
    key: 'auth.client_id',
    env: ['INSIGHT_CLIENT_ID'],
    secret: true,
    parse: anyString,
    doc: 'Sent as the x-client-id header (secret: environment only).',
    places: ['env'],
  },
  'auth.secret_key': {
    key: 'auth.secret_key',
    env: ['INSIGHT_SECRET_KEY'],
    secret: true,
    parse: anyString,
    doc: 'Sent as the x-secret-key header (secret: environment only).',
    places: ['env'],
  },
} as const satisfies Record<string, Setting>;
