/** The Traces page's URL search params: see model/filters.ts (kept there with the request they make, pure and tested). */
export type { SpanTab, TimeRange, TraceSort, TraceView, TracesSearch } from './model/filters.js';
export { validateTracesSearch } from './model/filters.js';
