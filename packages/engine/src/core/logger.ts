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
  const json = options.format === 'json';
  const hooks = {
    logMethod(this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn, levelValue: number) {
      if (tap.listening) tap.publish(this, args, levelValue);
      return method.apply(this, args);
    },
    ...(json ? {} : { streamWrite: escapeControlCharacters }),
  };
  const logger = pino({ level, base: undefined, hooks }, json ? destination : prettyStream(destination));
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

/**
 * Makes the control characters in a JSON log line visible text before the pretty printer decodes it,
 * so that no logged string (a worker's log message, an error message, a field value or key) can start
 * a line of its own and forge an entry (`\n[12:00:00.000] ERROR: …`), move the cursor or change
 * colours. A control character that the JSON has as an escape (`\n`, `\u001b`) gets that escape's
 * backslash escaped, so the decoded text reads `\n`; one that JSON leaves raw (DEL, the C1 controls
 * such as the 8-bit CSI, U+2028, U+2029) is written the same way as `\u009b`. Other escapes (`\\`,
 * `\"`, surrogates) are left alone. The JSON format needs none of this: its lines are JSON.
 */
function escapeControlCharacters(line: string): string {
  if (!NEEDS_ESCAPING.test(line)) return line;
  return line.replace(ESCAPES, (match: string, escaped: string | undefined) => {
    if (escaped === undefined) return `\\\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`;
    if (escaped === '\\' || escaped === '"') return match;
    if (escaped[0] === 'u' && !isControl(Number.parseInt(escaped.slice(1), 16))) return match;
    return `\\${match}`;
  });
}

/** A JSON escape, or a control character JSON leaves raw. */
const NEEDS_ESCAPING = /[\\\u007f-\u009f\u2028\u2029]/;
/** A JSON escape (its letters in group 1), or one raw DEL, C1 control or line/paragraph separator. */
const ESCAPES = /\\(u[0-9a-fA-F]{4}|[^u])|[\u007f-\u009f\u2028\u2029]/g;

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
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
