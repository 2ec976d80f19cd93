import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EndedSpan } from './span-of-otel.js';
import type { SpanStore } from './span-store.js';

/**
 * Keeps every sampled span that ends in the span store (`exporter: memory | both`), as it is: it becomes
 * a Span (spanOfEnded) only when a query first reads it.
 */
export class MemorySpanProcessor implements SpanProcessor {
  constructor(private readonly store: SpanStore) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & 1) === 0) return;
    this.store.addLazy(new EndedSpan(span), readableSize(span));
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The JSON text of a stored span with empty strings (see spanSize), plus its 32- and 16-digit ids, parent and scope. */
const READABLE_BASE = 218 + 32 + 16 + 14 + 79;

/** About the length of the span's JSON once stored (as spanSize estimates a Span), from the span as the SDK holds it. */
function readableSize(s: ReadableSpan): number {
  let n = READABLE_BASE + s.name.length + s.instrumentationScope.name.length;
  if (s.status.message !== undefined) n += s.status.message.length + 23;
  const attributes = s.attributes;
  for (const key in attributes) {
    const value = attributes[key];
    n += key.length + 8 + (typeof value === 'string' ? value.length : 12);
  }
  if (s.events.length > 0) n += 120 * s.events.length;
  if (s.links.length > 0) n += 120 * s.links.length;
  return n;
}
