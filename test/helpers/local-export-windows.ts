import { silentLogger } from '../../src/log.js';
import { exportWindows, type ExportWindow, type WindowOutcome } from '../../src/run/export-windows.js';
import type { InsightClient } from '../../src/source/client.js';
import { WindowState } from '../../src/state/window-state.js';
import type { ObjectStore } from '../../src/store/store.js';

/**
 * Exports units of test datasets (streamed windows: no request goes out) into `store` as NDJSON
 * partitioned by chain, one window paging at a time.
 */
export function exportUnitsLocally(
  units: ExportWindow[],
  o: { store: ObjectStore; jobName: string; stagingDir: string },
): Promise<WindowOutcome[]> {
  return exportWindows(units, {
    jobName: o.jobName,
    runId: 'r1',
    client: { maxInFlight: 2 } as InsightClient,
    state: new WindowState(o.store, o.jobName),
    output: {
      format: 'ndjson',
      parquetEngine: 'duckdb',
      compression: 'none',
      partitioning: '{dataset}/chain_id={chain_id}',
      maxRowsPerFile: 1_000_000,
      maxBytesPerFile: 1e9,
    },
    stagingDir: o.stagingDir,
    unitsInFlight: 1,
    logger: silentLogger,
  });
}
