/** The flame graph's geometry: width is time, depth is nesting (pure: no DOM; the canvas draws it). */
import type { TraceModel } from './tree.js';

/** The node indexes at each depth, by start time: what a row of the flame graph holds. */
export type FlameRows = number[][];

export function flameRows(model: TraceModel): FlameRows {
  const rows: FlameRows = Array.from({ length: model.nodes.length === 0 ? 0 : model.maxDepth + 1 }, () => []);
  for (const node of model.nodes) rows[node.depth]!.push(node.index);
  for (const row of rows) row.sort((a, b) => model.nodes[a]!.start - model.nodes[b]!.start || a - b);
  return rows;
}

/**
 * The span under the point at time `t` (ns from the trace's start) on row `depth`, or undefined. A span
 * narrower than `slackNs` counts as that wide, so thin spans can be hovered; the one whose start is
 * nearest before `t` wins.
 */
export function flameHit(model: TraceModel, rows: FlameRows, depth: number, t: number, slackNs = 0): number | undefined {
  const row = rows[depth];
  if (!row || row.length === 0) return undefined;
  // The last span starting at or before t (binary search), then its neighbours for thin spans.
  let lo = 0;
  let hi = row.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (model.nodes[row[mid]!]!.start <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  let best: number | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (let k = Math.max(0, found - 2); k <= Math.min(row.length - 1, found + 2); k++) {
    const node = model.nodes[row[k]!]!;
    const end = Math.max(node.end, node.start + slackNs);
    if (t < node.start - slackNs / 2 || t > end) continue;
    const distance = t >= node.start && t <= node.end ? 0 : Math.min(Math.abs(t - node.start), Math.abs(t - node.end));
    // On a tie the later span wins: it is drawn over the earlier one.
    if (distance <= bestDistance) {
      best = node.index;
      bestDistance = distance;
    }
  }
  return best;
}

/** The zoom window that shows span `index` whole with a little room either side (ns from the trace's start). */
export function zoomTo(model: TraceModel, index: number): { start: number; end: number } {
  const node = model.nodes[index];
  if (!node) return { start: 0, end: model.durationNs };
  const pad = Math.max((node.end - node.start) * 0.05, 1);
  return { start: Math.max(0, node.start - pad), end: Math.min(model.durationNs, node.end + pad) };
}
