import type { Span } from './span.js';

/**
 * For each span of one trace, the index of its parent among `spans`, or -1 for a root: a span without a
 * parent, one whose parent is not among them, and, in a loop of parents (a span its own parent, or A under
 * B under A), the loop's earliest-starting span (the first given on a tie). With duplicate span ids the
 * first span holding the id is the parent. Runs in linear time, without recursion.
 */
export function parentIndexes(spans: readonly Span[]): Int32Array {
  const indexOfId = new Map<string, number>();
  for (let i = 0; i < spans.length; i++) if (!indexOfId.has(spans[i]!.span_id)) indexOfId.set(spans[i]!.span_id, i);
  const parent = new Int32Array(spans.length);
  for (let i = 0; i < spans.length; i++) {
    const parentId = spans[i]!.parent_span_id;
    parent[i] = parentId === null ? -1 : (indexOfId.get(parentId) ?? -1);
  }
  // Walk up from each span not yet settled; meeting a span of the walk itself closes a loop.
  const ON_PATH = 1;
  const SETTLED = 2;
  const state = new Uint8Array(spans.length);
  const path: number[] = [];
  for (let start = 0; start < spans.length; start++) {
    if (state[start] !== 0) continue;
    path.length = 0;
    let i = start;
    while (i !== -1 && state[i] === 0) {
      state[i] = ON_PATH;
      path.push(i);
      i = parent[i]!;
    }
    if (i !== -1 && state[i] === ON_PATH) {
      let root = i;
      for (let k = path.indexOf(i) + 1; k < path.length; k++) {
        const candidate = path[k]!;
        const a = spans[candidate]!.start_time_unix_nano;
        const b = spans[root]!.start_time_unix_nano;
        if (a < b || (a === b && candidate < root)) root = candidate;
      }
      parent[root] = -1;
    }
    for (const k of path) state[k] = SETTLED;
  }
  return parent;
}
