import { LOG_LEVELS } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import { LOG_CALL_FORMAT, writeLogCall } from '../../lib/log-call.js';

/**
 * `engine::log::<level>`: a worker's log line, written to the engine log with `source: worker`.
 * Registered as replaceable defaults, so that a module that keeps logs (observability) can own them.
 */
const LEVEL_NOUNS: Record<(typeof LOG_LEVELS)[number], string> = {
  info: 'an info line',
  warn: 'a warning',
  error: 'an error line',
  debug: 'a debug line',
  trace: 'a trace line',
};

export function registerLogFunctions(ctx: ModuleContext): void {
  for (const level of LOG_LEVELS) {
    ctx.registerFunction(
      {
        id: `engine::log::${level}`,
        description: `Write ${LEVEL_NOUNS[level]} to the engine log`,
        request_format: LOG_CALL_FORMAT,
      },
      (data, call) => {
        writeLogCall(ctx.logger, level, data, call);
        return undefined;
      },
      { replaceable: true },
    );
  }
}
