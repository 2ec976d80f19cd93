import { FlintError, formatError } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import type { SpanStore } from './span-store.js';
import { listTraces, traceTree } from './trace-query.js';

/**
 * `engine::traces::list|tree|clear` over the span store. Without a store (tracing off, or `exporter:
 * otlp`) each answers `memory_exporter_not_enabled`, saying why.
 */
export function registerTraceFunctions(ctx: ModuleContext, store: SpanStore | undefined, whyNoStore: string): void {
  const withStore = <T>(run: (s: SpanStore) => T): T => {
    if (!store) throw new FlintError('memory_exporter_not_enabled', formatError('memory_exporter_not_enabled', { reason: whyNoStore }));
    return run(store);
  };
  ctx.registerFunction(
    {
      id: 'engine::traces::list',
      description:
        'Root spans of the traces kept, filtered (trace_id, service_name, name, status, min/max_duration_ms, start/end_time, attributes, include_internal, search_all_spans), sorted and paged',
      request_format: { type: 'object' },
    },
    (input) => withStore((s) => listTraces(s, input ?? {})),
  );
  ctx.registerFunction(
    {
      id: 'engine::traces::tree',
      description: 'The spans of one trace as trees (each span under its parent)',
      request_format: { type: 'object', properties: { trace_id: { type: 'string' } }, required: ['trace_id'] },
    },
    (input) => withStore((s) => traceTree(s, (input as { trace_id?: unknown } | null)?.trace_id as string)),
  );
  ctx.registerFunction({ id: 'engine::traces::clear', description: 'Empty the span store', request_format: { type: 'object' } }, () =>
    withStore((s) => {
      s.clear();
      return { success: true };
    }),
  );
}
