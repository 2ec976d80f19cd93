import type { Logger } from 'pino';
import type { LogLevelName, LogRecord } from './api/observe.js';

const LEVELS: Record<number, LogLevelName> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * Hands every record a logger writes to listeners (the log tap of the module API). The logger
 * calls `publish` from a pino `logMethod` hook, which child loggers share; with no listener the hook
 * checks one boolean.
 */
export class LogTap {
  listening = false;
  private listeners: ((record: LogRecord) => void)[] = [];

  add(listener: (record: LogRecord) => void): () => void {
    this.listeners = [...this.listeners, listener];
    this.listening = true;
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
      this.listening = this.listeners.length > 0;
    };
  }

  /** One call of a log method: `(fields?, message?, ...)` or `(message)` or `(error)`. */
  publish(logger: Logger, args: unknown[], level: number): void {
    const [first, second] = args;
    let fields: Record<string, unknown> = logger.bindings();
    let msg = '';
    if (typeof first === 'string') msg = first;
    else if (first instanceof Error) {
      fields = { ...fields, err: first };
      msg = typeof second === 'string' ? second : first.message;
    } else {
      if (first && typeof first === 'object') fields = { ...fields, ...(first as Record<string, unknown>) };
      if (typeof second === 'string') msg = second;
    }
    const record: LogRecord = { time: Date.now(), level: LEVELS[level] ?? 'info', msg, source: fields.source === 'worker' ? 'worker' : 'engine', fields };
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch {
        // A listener that throws must not break logging (nor log about itself, which would recurse).
      }
    }
  }
}
