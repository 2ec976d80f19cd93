import type { LogLevel } from '@flint/protocol';
import { type Worker, currentInvocation } from './worker.js';

/**
 * Writes log lines to the engine log (`engine::log::<level>`, fire-and-forget), tagged with the
 * current invocation's trace id. Without a worker it writes to the console.
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
    const traceId = currentInvocation()?.traceparent?.split('-')[1];
    if (!this.worker) {
      const line = `[${level}] ${message}`;
      if (level === 'error') console.error(line, data ?? '');
      else if (level === 'warn') console.warn(line, data ?? '');
      else console.log(line, data ?? '');
      return;
    }
    const payload: Record<string, unknown> = { message };
    if (data !== undefined) payload.data = data;
    if (traceId) payload.trace_id = traceId;
    if (this.serviceName) payload.service_name = this.serviceName;
    this.worker.trigger({ function_id: `engine::log::${level}`, payload, action: { type: 'void' } }).catch(() => {});
  }
}
