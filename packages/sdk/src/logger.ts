import type { LogLevel } from '@flint/protocol';
import { type Worker, currentInvocation } from './worker.js';

/**
 * Writes log lines to the engine log (`engine::log::<level>`, fire-and-forget), tagged with the
 * current invocation's trace and span ids (the worker's own span for the call, when it records one). Without a worker it writes to the console.
 */
export class Logger {
  constructor(
    private readonly worker?: Worker,
    private readonly serviceName?: string,
  ) {}

  info(message: string, data?: unknown): void {
    this.write('info', message, data);
  }
  warn(message: string, data?: unknown): void {
    this.write('warn', message, data);
  }
  error(message: string, data?: unknown): void {
    this.write('error', message, data);
  }
  debug(message: string, data?: unknown): void {
    this.write('debug', message, data);
  }
  trace(message: string, data?: unknown): void {
    this.write('trace', message, data);
  }

  private write(level: LogLevel, message: string, data: unknown): void {
    const context = currentInvocation()?.traceparent?.split('-');
    if (!this.worker) {
      const line = `[${level}] ${message}`;
      if (level === 'error') console.error(line, data ?? '');
      else if (level === 'warn') console.warn(line, data ?? '');
      else console.log(line, data ?? '');
      return;
    }
    const payload: Record<string, unknown> = { message };
    if (data !== undefined) payload.data = data;
    if (context?.length === 4) {
      payload.trace_id = context[1];
      payload.span_id = context[2];
    }
    if (this.serviceName) payload.service_name = this.serviceName;
    const functionId = `engine::log::${level}`;
    this.worker.trigger({ function_id: functionId, payload, action: { type: 'void' } }).catch((err: { code?: unknown }) => {
      // Data with no JSON form refuses the call before anything is sent: the line goes again with a copy
      // JSON can carry (a microtask later, so after any line written right after it in the same code).
      if (err?.code !== 'invalid_payload' || data === undefined) return;
      payload.data = loggable(data);
      this.worker?.trigger({ function_id: functionId, payload, action: { type: 'void' } }).catch(() => {});
    });
  }
}

/**
 * A copy of `data` that JSON can carry: each BigInt as its decimal string and each reference back to an
 * enclosing object as "[Circular]" (a log line is not lost to its data); else a note of why not (e.g. a
 * toJSON that throws).
 */
function loggable(data: unknown): unknown {
  const ancestors: unknown[] = [];
  try {
    return JSON.parse(
      JSON.stringify(data, function (this: unknown, _key: string, value: unknown) {
        if (typeof value === 'bigint') return value.toString();
        if (typeof value !== 'object' || value === null) return value;
        // The objects above this one: `this` is the one holding it.
        while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
        if (ancestors.includes(value)) return '[Circular]';
        ancestors.push(value);
        return value;
      }),
    );
  } catch (err) {
    return `[no JSON form: ${err instanceof Error ? err.message : String(err)}]`;
  }
}
