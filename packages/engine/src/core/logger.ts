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
  return pino({ level, base: undefined }, prettyStream(destination));
}

// One pretty stream per destination: each one adds listeners to its destination, so engines created
// one after another (tests, embedding) share it instead of piling them up.
const prettyStreams = new WeakMap<NodeJS.WritableStream, NodeJS.WritableStream>();

function prettyStream(destination: NodeJS.WritableStream): NodeJS.WritableStream {
  let stream = prettyStreams.get(destination);
  if (!stream) {
    stream = pretty({
      destination,
      sync: true,
      colorize: (destination as { isTTY?: boolean }).isTTY === true,
      translateTime: 'HH:MM:ss.l',
      ignore: 'pid,hostname',
      singleLine: true,
    });
    prettyStreams.set(destination, stream);
  }
  return stream;
}
