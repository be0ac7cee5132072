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

/** Logs go to stderr as JSON lines (pretty on a TTY): stdout is for command output. */
export function createLogger(opts: LogOptions = {}): Logger {
  const base: LoggerOptions = {
    level: opts.level ?? process.env.INSIGHT_EXPORT_LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const pretty = opts.pretty ?? (process.stderr.isTTY === true && opts.destination === undefined);
  if (pretty) {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: true } },
    });
  }
  const dest = opts.destination ?? 2;
  return pino(base, typeof dest === 'number' ? pino.destination({ fd: dest, sync: true }) : dest);
}

/** A logger that drops everything: for library use and tests that do not read logs. */
export const silentLogger: Logger = pino({ level: 'silent' });
