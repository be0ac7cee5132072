import type { Argv, CommandModule } from 'yargs';
import { ExitCode } from '../errors.js';
import { openSource, type SourceSession } from '../run/source-session.js';
import { ChainChecks } from '../run/chains.js';
import { lazyServiceBounds } from '../run/service-bounds.js';
import { readKnownHeads } from '../state/chain-heads.js';
import { resolveWalletNames } from '../run/targets.js';
import {
  damagedWindows,
  verifyDestination,
  WINDOW_DAMAGE,
  type PendingTail,
  type VerifyProblem,
  type VerifyReport,
} from '../state/verify.js';
import { recountWindows } from '../run/recount.js';
import { limitHeapGrowth } from '../run/heap-growth.js';
import { formatInterval, isoUtc } from '../plan/format-interval.js';
import { axisOfStreamKey } from '../plan/stream-key.js';
import { openStore } from '../store/open-store.js';
import { verifyChainHashes, type ChainHashReport } from '../state/verify-chain-hashes.js';
import { WindowState } from '../state/window-state.js';
import { describeContentCheck } from '../state/verify-content.js';
import { BlockLookup } from '../source/block-by-number.js';
import { givenJobFlags, loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import { jobTables } from '../run/tables.js';
import type { IcebergVerifyReport } from '../iceberg/index.js';
import type { Job } from '../job/schema.js';
import type { ObjectStore } from '../store/store.js';
import type { ResolvedConfig } from '../config/index.js';

interface VerifyArgs extends ConfigArgs {
  job: string;
  json: boolean;
  quick: boolean;
  'chain-hashes': boolean;
  'chain-hashes-sample'?: number | undefined;
  recount: boolean;
  content: boolean;
}

/** Checks the destination against the job and its state; exit 0 only when the export is complete and consistent. */
export function verifyCommand(setExit: (code: number) => void): CommandModule<object, VerifyArgs> {
  return {
    command: 'verify <job>',
    describe:
      'Check the destination against the state: every planned window present, files and row counts as recorded, no gaps or overlaps',
    builder: verifyFlags,
    handler: async (args) => {
      // Reading every window's record allocates far more than it keeps (one unit at a time).
      limitHeapGrowth();
      const { job: loaded, config, logger } = await loadJobContext(args.job, args, ['destination']);
      // Unit keys hold addresses: names are resolved by the service, as a run does.
      const needsSource = args['chain-hashes'] || args.recount || loaded.targets.some((t) => t.kind === 'wallet' && t.isName);
      const source = needsSource ? await openSource(config, logger) : null;
      const opened: { session: SourceSession | null } = { session: null };
      const store = await openStore(config.output.destination!, { s3: config.s3, logger });
      try {
        const job =
          source && loaded.targets.some((t) => t.kind === 'wallet' && t.isName) ? await resolveWalletNames(loaded, source.client) : loaded;
        const iceberg = config.output.format === 'iceberg' ? await verifyTables(store, job, config) : null;
        const given = [args.job, ...givenJobFlags(args)].join(' ');
        // A fixed range is expected as a run plans it, up to the service's head minus the safety lag (asked only when not complete).
        const service = lazyServiceBounds(async () => {
          const client = (source ?? (opened.session ??= await openSource(config, logger))).client;
          return new ChainChecks(job, client, await readKnownHeads(store, job.name));
        });
        const report: VerifyReport & { chain_hashes?: ChainHashReport } = await verifyDestination({
          store,
          job,
          quick: args.quick,
          content: args.content,
          output: config.output,
          service,
          ...(iceberg ? { retained: iceberg.retained } : {}),
          ...(args.recount && source
            ? { recount: (records, files) => recountWindows({ job, records, files, client: source.client, store }) }
            : {}),
        });
        for (const p of iceberg?.problems ?? []) {
          report.problems.push({ kind: 'iceberg-table', ...(p.key ? { key: p.key } : {}), message: `table ${p.table}: ${p.message}` });
          report.ok = false;
        }
        if (args['chain-hashes'] && source) {
          const hashes = await verifyChainHashes({
            store,
            state: new WindowState(store, job.name),
            blocks: new BlockLookup(source.client),
            sample: args['chain-hashes-sample'] ?? null,
            concurrency: source.client.maxInFlight,
            onPlan: (p) =>
              logger.info(
                { requests: p.requests, edges: p.edges, chains: p.chains, windows: p.windows, in_flight: source.client.maxInFlight },
                'verify --chain-hashes: requests planned (plus ~log2 of the row blocks of each window whose edge changed)',
              ),
          });
          report.chain_hashes = hashes;
          for (const p of hashes.problems)
            report.problems.push({
              kind: 'chain-hash',
              unit: p.unit,
              window: p.window,
              ...(p.key ? { key: p.key } : {}),
              message: p.message,
            });
          if (hashes.problems.length > 0) report.ok = false;
        }
        process.stdout.write(
          args.json
            ? `${JSON.stringify(withRemoval(report, given), null, 2)}\n`
            : render(report, given, config.output.format === 'iceberg'),
        );
        setExit(report.ok ? ExitCode.ok : ExitCode.failed);
      } finally {
        await source?.close();
        await opened.session?.close();
        await store.close?.();
      }
    },
  };
}

/** verify's flags beside the job settings'. */
function verifyFlags(y: Argv): Argv<VerifyArgs> {
  return withConfigFlags(y)
    .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
    .option('json', { type: 'boolean', default: false, describe: 'Print the verification report as JSON' })
    .option('quick', { type: 'boolean', default: false, describe: 'Check file sizes only; do not read files to count their rows' })
    .option('content', {
      type: 'boolean',
      default: false,
      describe:
        'Also read every file and compare its SHA-256 with the one recorded when it was written (finds a file edited or rotted at the same size; files of older versions carry none and are said so)',
    })
    .option('chain-hashes', {
      type: 'boolean',
      default: false,
      describe:
        "Also ask the service whether each window's recorded edge block is still the chain's (one request per distinct edge of a chain; the rows of a window whose edge changed are bisected to name the first replaced block; in a window exported again, the newest block of its rows is compared too, one request each)",
    })
    .option('recount', {
      type: 'boolean',
      default: false,
      describe:
        'Also ask the service how many rows each completed window holds (one count request per window and target, up to source.chain_ids_per_request chains each) and compare with the files',
    })
    .option('chain-hashes-sample', {
      type: 'number',
      describe:
        'With --chain-hashes: also compare this many blocks of rows of every window, spread evenly (default: none beyond the edges)',
    })
    .example('$0 verify jobs/demo.yaml', 'Is ./out a complete export of the demo job?')
    .example('$0 verify jobs/demo.yaml --recount', 'Do its files hold every row the service has?')
    .example('$0 verify jobs/demo.yaml --content', 'Is every file byte for byte what the export wrote?') as never;
}

/** The command that exports a window again (`job`: the job file and the flags verify was given). */
function repairCommand(job: string, unit: string, window: [number, number]): string {
  const axis = axisOfStreamKey(unit);
  const point = (n: number) => (axis === 'block' ? String(n) : isoUtc(n));
  return `insight-export run ${job} --repair --from ${point(window[0])} --to ${point(window[1])}`;
}

function describeProblem(p: VerifyProblem): string {
  const where = [
    p.unit,
    p.window && p.unit ? formatInterval(axisOfStreamKey(p.unit), { start: p.window[0], end: p.window[1] }) : undefined,
    p.key,
  ]
    .filter(Boolean)
    .join(' ');
  return `  ${p.kind.toUpperCase()} ${where}: ${p.message}`;
}

/** A chain whose range the service does not serve to its end yet: not a problem, a later run exports it. */
function describePending(p: PendingTail): string {
  const at = (n: number) => (p.axis === 'block' ? `block ${n}` : isoUtc(n));
  return (
    `  pending: ${p.windows} window(s) on chain ${p.chain_id}, ${formatInterval(p.axis, { start: p.range[0], end: p.range[1] })}: not served yet ` +
    `(past the service's head${p.head === null ? '' : ` (${at(p.head)})`} minus the safety lag); a run exports them once the head reaches ${at(p.exportable_at_head)}`
  );
}

/** The command that removes the job's files no state names (`job`: the job file and the flags verify was given). */
const removalCommand = (job: string) => `insight-export remove-orphan-files ${job}`;

/** Files no state names that remove-orphan-files removes (not those of a commit under way). */
const removable = (r: VerifyReport) => r.problems.filter((p) => p.kind === 'unreferenced-file' && !p.pending);

/** The JSON report with the removal command when there is something to remove. */
function withRemoval(r: VerifyReport, job: string): VerifyReport & { remove_unreferenced?: string } {
  return removable(r).length > 0 ? { ...r, remove_unreferenced: removalCommand(job) } : r;
}

/** `job`: the job file and the flags verify was given, for the repair and removal commands. */
function render(r: VerifyReport & { chain_hashes?: ChainHashReport }, job: string, iceberg: boolean): string {
  const w = r.windows;
  const lines = [
    `${r.ok ? (r.windows.pending > 0 ? "complete up to the service's head" : 'complete') : 'NOT complete'}: job ${r.job} at ${r.destination}` +
      (r.recount?.not_provable.length ? ` (${r.recount.not_provable.length} window(s) not provable by the recount)` : ''),
    `  windows: ${w.completed} completed (${w.completed - w.damaged} intact, ${w.damaged} damaged), ${w.missing} missing` +
      `${w.pending > 0 ? `, ${w.pending} pending` : ''} of ${w.planned} planned (${r.units.length} streams)`,
    ...r.pending.map(describePending),
    `  files: ${r.files.listed} listed, ${r.files.unreferenced} not listed by any window; rows: ${r.rows.recorded} recorded` +
      (r.rows.counted === null ? ' (not counted: --quick)' : `, ${r.rows.counted} counted in ${r.files.checked_rows} files`),
    `  ${describeContentCheck(r.content)}`,
  ];
  if (r.recount) {
    const c = r.recount;
    const per = c.requests_per_1000_windows === null ? '' : ` (${c.requests_per_1000_windows} per 1,000 windows)`;
    lines.push(
      `  recount: ${c.windows_checked} windows asked of the service in ${c.requests} requests${per}: ${c.windows_ok} equal, ${c.mismatches.length} differ, ${c.not_provable.length} not provable`,
    );
    const notProvable = new Map<string, { n: number; reason: string }>();
    for (const x of c.not_provable) notProvable.set(x.unit, { n: (notProvable.get(x.unit)?.n ?? 0) + 1, reason: x.reason ?? '' });
    for (const [unit, x] of notProvable) lines.push(`  not provable ${unit}: ${x.n} window(s), ${x.reason}`);
    for (const s of c.skipped) lines.push(`  not recounted ${s.unit}: ${s.reason}`);
  }
  if (r.chain_hashes) {
    const h = r.chain_hashes;
    lines.push(
      `  chain hashes: ${h.requests} requests (${h.requests_planned} planned): ${h.edges_checked} window edges and ${h.row_blocks_checked} blocks of rows ` +
        `(${h.sample ? `${h.sample} per window, ` : ''}the newest of each window exported again, bisected where one changed) in ${h.windows_checked} windows`,
    );
  }
  if (r.lease) {
    lines.push(
      r.lease.active
        ? `  a run is in progress: ${r.lease.run_id} on ${r.lease.holder} (lease until ${r.lease.expires_at})`
        : `  last lease: run ${r.lease.run_id} on ${r.lease.holder}, ${r.lease.released ? 'released' : `expired ${r.lease.expires_at}`}`,
    );
  }
  if (r.other_units.length > 0)
    lines.push(
      `  state of ${r.other_units.length} unit(s) the job no longer has (ignored): ${r.other_units.slice(0, 3).join(', ')}${r.other_units.length > 3 ? ' ...' : ''}`,
    );
  const damaged = new Set(damagedWindows(r.problems).map((d) => `${d.unit}|${d.window[0]}`));
  for (const p of r.problems) {
    const repairs = WINDOW_DAMAGE.has(p.kind) && p.unit && p.window && damaged.delete(`${p.unit}|${p.window[0]}`);
    const removes = p.kind === 'unreferenced-file' && !p.pending;
    lines.push(
      describeProblem(p) +
        (repairs ? `; repair: ${repairCommand(job, p.unit!, p.window!)}` : removes ? `; remove: ${removalCommand(job)}` : ''),
    );
  }
  if (removable(r).length > 0)
    lines.push(
      `  remove every file above that no state names: ${removalCommand(job)} (it deletes only files no completed window, pending commit or Iceberg snapshot names${iceberg ? ', once older than output.snapshot_retention' : ''}; --dry-run lists them)`,
    );
  const again = [r.windows.missing > 0 ? 'missing' : '', r.windows.damaged > 0 ? 'damaged' : ''].filter(Boolean);
  if (again.length > 0)
    lines.push(
      `  repair every window above: insight-export run ${job}${r.windows.damaged > 0 ? ' --repair' : ''} (exports the ${again.join(' and ')} windows again)`,
    );
  return `${lines.join('\n')}\n`;
}

/** An Iceberg destination's tables checked against the state (src/iceberg/verify-tables.ts). */
async function verifyTables(store: ObjectStore, job: Job, config: ResolvedConfig): Promise<IcebergVerifyReport> {
  const { verifyIcebergTables, catalogOfConfig } = await import('../iceberg/index.js');
  const tables = (await jobTables(job)).map((t) => t.name);
  // With output.catalog.uri each table is the one the catalog serves.
  const catalog = catalogOfConfig(config, job.name);
  return verifyIcebergTables({ store, state: new WindowState(store, job.name), tables, catalog });
}
