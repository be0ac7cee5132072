/** Settings of Iceberg tables: how often a run commits to them, how long their snapshots stay readable. */
import { durationSetting, positiveDurationMs } from './parsers.js';
import { ALL, type Setting } from './setting.js';
import { parseDurationMs } from './values.js';

export const ICEBERG_SETTINGS = {
  'output.iceberg_commit_interval_ms': {
    key: 'output.iceberg_commit_interval_ms',
    fileKey: 'output.iceberg_commit_interval',
    flag: { name: 'iceberg-commit-interval', type: 'string', for: ['run'] },
    env: ['INSIGHT_EXPORT_ICEBERG_COMMIT_INTERVAL'],
    ...durationSetting(parseDurationMs, 600_000, '10m'),
    doc: 'output.format iceberg: while a run exports, commit the windows done so far to the tables this often (readers see them as a new snapshot), e.g. 10m (default); "0s": only at the end of the run.',
    places: ALL,
  },
  'output.snapshot_retention_ms': {
    key: 'output.snapshot_retention_ms',
    fileKey: 'output.snapshot_retention',
    flag: { name: 'snapshot-retention', type: 'string', for: ['history'] },
    env: ['INSIGHT_EXPORT_SNAPSHOT_RETENTION'],
    ...durationSetting(positiveDurationMs, 7 * 86_400_000, '7d'),
    doc: 'Iceberg tables: how long a snapshot stays readable for time travel after it was committed, e.g. "7d" (default). expire-snapshots removes older snapshots (never the current one) and the files only they name; remove-orphan-files removes only unreferenced files older than this.',
    places: ALL,
  },
} as const satisfies Record<string, Setting>;
