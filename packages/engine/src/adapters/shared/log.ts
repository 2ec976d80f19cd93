import pino from 'pino';
import type { Logger } from '../../core/logger.js';

/**
 * What an adapter reports through (a damaged record skipped, a connection lost and restored). The
 * engine's pino Logger is one; so is the `{warn, info}` pair the engine passes to `openKvStore`.
 */
export interface AdapterLog {
  warn(message: string): void;
  info(message: string): void;
}

/** Where adapter warnings go when the caller names no logger: `process.emitWarning` (code FLINT_ADAPTER); info lines are dropped. */
export const processWarnings: AdapterLog = {
  warn: (message) => process.emitWarning(message, { code: 'FLINT_ADAPTER' }),
  info: () => {},
};

/** pino's numeric level of `warn`: lines at this level or above go to `sink.warn`. */
const WARN_LEVEL = 40;

/**
 * A Logger (what `AdapterEnv.logger` must be) that hands each line's message to `sink`: `warn` and worse
 * to `sink.warn`, `info` to `sink.info`; debug and trace are dropped.
 */
export function loggerFor(sink: AdapterLog): Logger {
  return pino(
    { level: 'info', base: undefined, timestamp: false },
    {
      write(line: string) {
        const { level, msg } = JSON.parse(line) as { level: number; msg?: unknown };
        const message = typeof msg === 'string' ? msg : String(msg ?? '');
        if (level >= WARN_LEVEL) sink.warn(message);
        else sink.info(message);
      },
    },
  );
}
