import type { FlowLayout, FlowPosition, FlowResponse } from '../api-types.js';
import { buildFlowGraph } from '../flow-graph.js';
import { flowStateOf } from '../flow-traces.js';
import { ApiFailure, badRequest } from '../http/failure.js';
import type { Route, RouteContext } from '../http/router.js';
import { metricsHistoryOf } from '../metrics-history.js';

/** Positions saved at most (nodes of one graph). */
const MAX_POSITIONS = 10_000;
/** The farthest a node may be placed from the origin. */
const MAX_COORDINATE = 1e7;

/** The Flow page is opt-in (--enable-flow): its routes answer 404 `flow_disabled` otherwise. */
function requireFlow({ options }: Pick<RouteContext, 'options'>): void {
  if (!options.enableFlow) throw new ApiFailure(404, 'flow_disabled', 'the Flow page is off: start the console with --enable-flow (or FLINT_ENABLE_FLOW=1)');
}

/** The positions of a PUT /_console/flow/layout body, checked. */
function positionsOfBody(body: Record<string, unknown>): Record<string, FlowPosition> {
  const positions = body.positions;
  if (!positions || typeof positions !== 'object' || Array.isArray(positions)) throw badRequest('positions must be an object: {"<node id>": {"x": 0, "y": 0}}');
  const entries = Object.entries(positions as Record<string, unknown>);
  if (entries.length > MAX_POSITIONS) throw badRequest(`positions holds ${entries.length} nodes; at most ${MAX_POSITIONS}`);
  const out: Record<string, FlowPosition> = {};
  for (const [id, p] of entries) {
    if (id === '' || id.length > 1000) throw badRequest('a node id must have 1 to 1000 characters');
    const { x, y } = (p && typeof p === 'object' ? p : {}) as { x?: unknown; y?: unknown };
    const ok = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX_COORDINATE;
    if (!ok(x) || !ok(y)) throw badRequest(`the position of ${id} must be {x, y} with finite numbers (at most ${MAX_COORDINATE} from 0)`);
    out[id] = { x: Math.round(x * 10) / 10, y: Math.round(y * 10) / 10 };
  }
  return out;
}

/** The Flow page: the registry's triggers and functions with the edges learned from recent traces, and the saved layout. */
export const flowRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/flow',
    handler: async (ctx): Promise<FlowResponse> => {
      requireFlow(ctx);
      const { link } = ctx;
      const metrics = metricsHistoryOf(link);
      const state = flowStateOf(link);
      const [{ functions, triggers }, traces] = await Promise.all([state.registry.get(), state.traces.refresh(), metrics.current()]);
      const { nodes, edges } = buildFlowGraph({
        functions,
        triggers,
        learned: traces.edges,
        sightings: traces.triggers,
        stats: metrics.metricsAvailable ? metrics.functionStats() : undefined,
      });
      const traceInfo: FlowResponse['traces'] = { available: traces.available, window: traces.window, read: traces.read, pending: traces.pending };
      if (traces.reason) traceInfo.reason = traces.reason;
      if (traces.detail) traceInfo.detail = traces.detail;
      return { nodes, edges, traces: traceInfo, metrics_available: metrics.metricsAvailable, generated_at: Date.now() };
    },
  },
  {
    method: 'GET',
    path: '/_console/flow/layout',
    handler: (ctx): Promise<FlowLayout> => {
      requireFlow(ctx);
      return flowStateOf(ctx.link).layout.get();
    },
  },
  {
    method: 'PUT',
    path: '/_console/flow/layout',
    handler: async (ctx): Promise<FlowLayout> => {
      requireFlow(ctx);
      return flowStateOf(ctx.link).layout.set(positionsOfBody(await ctx.body()));
    },
  },
];
