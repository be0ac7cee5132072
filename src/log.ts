import { createRequire } from 'node:module';
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Header and field names whose values must never reach a log line. */
export const REDACT_PATHS = [
  'headers["x-secret-key"]',
  'headers["x-client-id"]',
  'headers.authorization',
  'req.headers["x-secret-key"]',
  'req.headers["x-client-id"]',
  'req.headers.authorization',
  '*.secretKey',
  '*.clientId',
  '*.secretAccessKey',
  '*.accessKeyId',
  '*.sessionToken',
  'secretKey',
  'clientId',
  'secretAccessKey',
  'accessKeyId',
  'sessionToken',
];

export interface LogOptions {
  level?: string;
  /** Pretty output (only sensible on a TTY). Defaults to stderr being a TTY. */
  pretty?: boolean;
  /** Where JSON lines go; defaults to stderr (fd 2). */
  destination?: NodeJS.WritableStream | number;
}

/**
 * A line kept at the bottom of the terminal (the run's progress bar). Log lines pass through
 * `print`, which clears the line, writes the log text and draws the line again below it.
 */
export interface StatusLine {
  print(write: () => void): void;
}

let statusLine: StatusLine | null = null;

/** While set, every logger's lines are printed through this status line (null: straight through). */
export function setStatusLine(line: StatusLine | null): void {
  statusLine = line;
}

/**
 * The keys a log line's own fields take (pino's and its pretty printer's): a field of the same name
 * would make a second key in the JSON line, and parsers keep the last one.
 */
export const LOG_LINE_KEYS = ['time', 'level', 'msg', 'pid', 'hostname'] as const;

/** `fields` with any key of LOG_LINE_KEYS moved under `fields` (a nested object), so no key of the line is written twice. */
export function withoutLineKeys(fields: Record<string, unknown>): Record<string, unknown> {
  if (!LOG_LINE_KEYS.some((k) => Object.hasOwn(fields, k))) return fields;
  const kept: Record<string, unknown> = {};
  const moved: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) ((LOG_LINE_KEYS as readonly string[]).includes(k) ? moved : kept)[k] = v;
  const nested = typeof kept.fields === 'object' && kept.fields !== null ? (kept.fields as Record<string, unknown>) : {};
  return { ...kept, fields: { ...nested, ...moved } };
}

/**
 * Logs go to stderr as JSON lines (pretty on a TTY): stdout is for command output. Pretty lines
 * are formatted in this thread (not a pino transport's worker) so that they reach the terminal
 * in order with the status line's redraws.
 */
export function createLogger(opts: LogOptions = {}): Logger {
  const base: LoggerOptions = {
    level: opts.level ?? process.env.INSIGHT_EXPORT_LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: withoutLineKeys },
  };
  const pretty = opts.pretty ?? (process.stderr.isTTY === true && opts.destination === undefined);
  const dest = opts.destination ?? 2;
  const out = typeof dest === 'number' ? pino.destination({ fd: dest, sync: true }) : dest;
  const format = pretty ? prettyLines() : (line: string) => line;
  const logger = pino(base, {
    write(line: string) {
      const text = format(line);
      if (statusLine) statusLine.print(() => out.write(text));
      else out.write(text);
    },
  });
  return withChildrenWithoutLineKeys(logger);
}

/** A child's bindings pass through withoutLineKeys too (pino's `formatters.log` sees only a call's own fields). */
function withChildrenWithoutLineKeys(logger: Logger): Logger {
  const child = logger.child.bind(logger);
  logger.child = ((bindings: Record<string, unknown>, options?: object) =>
    withChildrenWithoutLineKeys(child(withoutLineKeys(bindings), options) as Logger)) as unknown as Logger['child'];
  return logger;
}

/** pino-pretty's formatter, loaded only when a logger is pretty (it costs start-up time). */
function prettyLines(): (line: string) => string {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return prettyFactory({ colorize: true });
}

/** A logger that drops everything: for library use and tests that do not read logs. */
export const silentLogger: Logger = pino({ level: 'silent' });
