/** An engine logger that writes JSON lines into memory, parsed as they arrive, for tests that assert on logs. */
import { PassThrough } from 'node:stream';
import { type Logger, createLogger } from '@flint/engine';

/** One JSON log line of the engine. */
// biome-ignore lint/suspicious/noExplicitAny: log records are arbitrary JSON
export type LogRecord = Record<string, any>;

/** pino's numeric levels, as they appear in `LogRecord.level`. */
export const LEVEL = { info: 30, warn: 40, error: 50 } as const;

export interface LogCapture {
  logger: Logger;
  /** Every log line written so far, parsed (a line that is not JSON is kept as `{ msg: line }`). */
  readonly records: LogRecord[];
}

/** A JSON logger at `level` whose output lands in `records`. */
export function captureLog(level = 'info'): LogCapture {
  const records: LogRecord[] = [];
  const destination = new PassThrough();
  let pending = '';
  destination.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.trim() !== '') {
        try {
          records.push(JSON.parse(line) as LogRecord);
        } catch {
          records.push({ msg: line });
        }
      }
      nl = pending.indexOf('\n');
    }
  });
  return { logger: createLogger({ format: 'json', level, destination }), records };
}
