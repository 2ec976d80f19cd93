import type { StoredLogRecord } from './log-record.js';

/** What a record costs besides its strings and maps: the object, its numbers, the store's bookkeeping. */
export const RECORD_OVERHEAD_BYTES = 200;

/** At most this many values of a record's maps are walked; the rest are charged as one large value. */
const MAX_NODES = 10_000;
/** Deeper values (and the remainder of a record past MAX_NODES) are charged this much each. */
const OPAQUE_VALUE_BYTES = 1024;
const MAX_DEPTH = 16;

/**
 * An estimate of the bytes a record holds, close to the size of its JSON: strings by length, numbers
 * 8, maps by their keys and values. Computed once, when the record is stored. Bounded work whatever the
 * record holds (cycles, very deep or very wide values); an object shared by many records (a resource)
 * is charged to each of them, so the estimate errs on the large side.
 */
export function estimateLogBytes(record: StoredLogRecord): number {
  const budget = { nodes: MAX_NODES };
  return (
    RECORD_OVERHEAD_BYTES +
    stringBytes(record.body) +
    stringBytes(record.severity_text) +
    stringBytes(record.trace_id) +
    stringBytes(record.span_id) +
    stringBytes(record.service_name) +
    stringBytes(record.instrumentation_scope_name) +
    stringBytes(record.instrumentation_scope_version) +
    valueBytes(record.attributes, 0, budget) +
    valueBytes(record.resource, 0, budget)
  );
}

function stringBytes(value: string | null | undefined): number {
  return typeof value === 'string' ? value.length + 2 : 0;
}

function valueBytes(value: unknown, depth: number, budget: { nodes: number }): number {
  if (--budget.nodes < 0 || depth > MAX_DEPTH) return OPAQUE_VALUE_BYTES;
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
    case 'bigint':
      return 8;
    case 'boolean':
      return 5;
    case 'object': {
      if (value === null) return 4;
      if (ArrayBuffer.isView(value)) return value.byteLength;
      let bytes = 2;
      if (Array.isArray(value)) {
        for (const item of value) {
          bytes += 1 + valueBytes(item, depth + 1, budget);
          if (budget.nodes < 0) break;
        }
        return bytes;
      }
      for (const key in value) {
        bytes += key.length + 4 + valueBytes((value as Record<string, unknown>)[key], depth + 1, budget);
        if (budget.nodes < 0) break;
      }
      return bytes;
    }
    default:
      return 4;
  }
}
