export type { SpanEvent, SpanInfo as Span, SpanLink, SpanStatus } from '@flint/protocol';
