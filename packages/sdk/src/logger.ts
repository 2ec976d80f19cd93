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
    this.worker.trigger({ function_id: `engine::log::${level}`, payload, action: { type: 'void' } }).catch(() => {});
  }
}
