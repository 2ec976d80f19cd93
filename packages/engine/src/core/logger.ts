import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { LogTap } from './log-tap.js';

export type { Logger };

export interface LoggerOptions {
  level?: string;
  format?: 'pretty' | 'json';
  /** Where log lines go; defaults to stdout. */
  destination?: NodeJS.WritableStream;
}

const TAP = Symbol.for('flint.logTap');

/** The engine's logger: readable lines by default, JSON lines with `format: json`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const destination = options.destination ?? process.stdout;
  const tap = new LogTap();
  const hooks = {
    logMethod(this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn, levelValue: number) {
      if (tap.listening) tap.publish(this, args, levelValue);
      return method.apply(this, args);
    },
  };
  const logger = pino({ level, base: undefined, hooks }, options.format === 'json' ? destination : prettyStream(destination));
  // Child loggers are made with Object.create(parent) and so see the root's tap too.
  Object.defineProperty(logger, TAP, { value: tap });
  return logger;
}

/**
 * The log tap of a logger made by `createLogger` (or a child of one). A logger made elsewhere has
 * none, and what it logs does not reach the tap.
 */
export function logTapOf(logger: Logger): LogTap | undefined {
  return (logger as unknown as { [TAP]?: LogTap })[TAP];
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
