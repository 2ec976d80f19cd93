import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerOptions {
  level?: string;
  format?: 'pretty' | 'json';
  /** Where log lines go; defaults to stdout. */
  destination?: NodeJS.WritableStream;
}

/** The engine's logger: readable lines by default, JSON lines with `format: json`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const destination = options.destination ?? process.stdout;
  if (options.format === 'json') return pino({ level, base: undefined }, destination);
  const stream = pretty({
    destination,
    sync: true,
    colorize: (destination as { isTTY?: boolean }).isTTY === true,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  return pino({ level, base: undefined }, stream);
}
