import { withModule } from '../client.js';
import { table, truncate } from '../table.js';

export interface TracesCommandOptions {
  json?: boolean;
  url?: string;
  token?: string;
  limit?: number;
  name?: string;
  errors?: boolean;
}

/** A span as `engine::traces::list|tree` give it (the fields shown here). */
interface SpanRow {
  trace_id: string;
  span_id: string;
  name: string;
  service_name: string;
  status: string;
  status_description?: string;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
  children?: SpanRow[];
}

const OBSERVABILITY = { module: 'flint-observability', what: 'observability module' };

/** `flint traces`: the most recent traces (their root spans), newest first. */
export function tracesList(options: TracesCommandOptions): Promise<string> {
  return withModule(options, OBSERVABILITY, async (w) => {
    const query: Record<string, unknown> = { limit: options.limit ?? 20, sort_by: 'start_time', sort_order: 'desc' };
    if (options.name !== undefined) query.name = options.name;
    if (options.errors) query.status = 'error';
    const answer = (await w.trigger({ function_id: 'engine::traces::list', payload: query })) as { spans: SpanRow[]; total: number };
    if (options.json) return JSON.stringify(answer, null, 2);
    if (answer.spans.length === 0) {
      return options.name !== undefined || options.errors ? 'no kept trace matches' : 'no traces kept yet (calls and HTTP requests are traced as they happen)';
    }
    const rows = answer.spans.map((s) => [time(s.start_time_unix_nano), duration(s), s.status, truncate(s.name, 50), s.service_name, s.trace_id]);
    const shown = answer.total > answer.spans.length ? `\n${answer.spans.length} of ${answer.total} traces; --limit shows more` : '';
    return `${table(['START', 'DURATION', 'STATUS', 'NAME', 'SERVICE', 'TRACE ID'], rows)}${shown}`;
  });
}

/** `flint traces show TRACE_ID`: one trace as a tree, each span under the one it ran in. */
export function tracesShow(traceId: string, options: TracesCommandOptions): Promise<string> {
  return withModule(options, OBSERVABILITY, async (w) => {
    const answer = (await w.trigger({ function_id: 'engine::traces::tree', payload: { trace_id: traceId } })) as { roots: SpanRow[] };
    if (options.json) return JSON.stringify(answer, null, 2);
    if (answer.roots.length === 0) return `no spans of trace ${traceId} are kept (the store keeps the most recent ones)`;
    const rows: string[][] = [];
    const walk = (span: SpanRow, depth: number) => {
      const failure = span.status === 'error' && span.status_description ? `: ${span.status_description}` : '';
      rows.push([`${'  '.repeat(depth)}${span.name}`, span.service_name, duration(span), truncate(`${span.status}${failure}`, 60)]);
      for (const child of span.children ?? []) walk(child, depth + 1);
    };
    for (const root of answer.roots) walk(root, 0);
    return table(['SPAN', 'SERVICE', 'DURATION', 'STATUS'], rows);
  });
}

function time(nanos: number): string {
  return new Date(nanos / 1e6).toISOString().replace('T', ' ').replace('Z', '');
}

function duration(span: SpanRow): string {
  const ms = (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6;
  return ms < 10 ? `${ms.toFixed(2)} ms` : ms < 10_000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
