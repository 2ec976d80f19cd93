import { EngineFunctions, FlintError, type FunctionInfo, type TriggerInfo } from '@flint/sdk';
import type { FlowLayout, FlowPosition, SpanStoreUnavailableReason } from './api-types.js';
import type { EngineLink } from './engine-link.js';
import { type EdgeObservation, type EdgeTotals, type TraceSpan, type TraceTreeSpan, type TriggerSighting, aggregateEdges, edgesOfTrace } from './flow-edges.js';

/** Root rows asked of `engine::traces::list` per refresh (newest first): the window edges are learned from. */
export const TRACE_WINDOW = 500;
/** Trace trees read per refresh at most; the rest wait for the next refresh. */
export const TREES_PER_REFRESH = 40;
/** Trees read at once. */
const CONCURRENCY = 8;
/** A trace younger than this may still grow (queue deliveries, spans of slow workers): it is read again until it is older. */
export const SETTLE_MS = 10_000;
/** A young trace is read again at most this often. */
const REREAD_MS = 2000;

interface CachedTrace {
  observations: EdgeObservation[];
  triggers: TriggerSighting[];
  /** The newest root's start (epoch ms). */
  startMs: number;
  /** It was read when old enough not to grow any more; else it is read again now and then. */
  settled: boolean;
  readAt: number;
}

export interface TraceEdgesResult {
  available: boolean;
  reason?: SpanStoreUnavailableReason;
  detail?: string;
  edges: EdgeTotals[];
  triggers: TriggerSighting[];
  window: number;
  read: number;
  pending: number;
}

/**
 * The edges of the newest traces the engine holds, for GET /_console/flow. Each refresh lists the newest
 * TRACE_WINDOW root spans (one `engine::traces::list`), drops the traces that left that window, and reads
 * the trees (`engine::traces::tree`) of new traces only, at most TREES_PER_REFRESH of them (newest first),
 * then again those read while younger than SETTLE_MS (every 2 s at most, until read when older: a queue
 * message's delivery joins its trace later). Concurrent refreshes share one.
 */
export class FlowTraceCache {
  private readonly traces = new Map<string, CachedTrace>();
  private running: Promise<TraceEdgesResult> | undefined;

  constructor(
    private readonly link: EngineLink,
    private readonly limits = { window: TRACE_WINDOW, perRefresh: TREES_PER_REFRESH, settleMs: SETTLE_MS },
  ) {}

  refresh(): Promise<TraceEdgesResult> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<TraceEdgesResult> {
    let list: { spans: TraceSpan[] } | undefined;
    try {
      list = await this.link.callOptional<{ spans: TraceSpan[] }>('engine::traces::list', {
        limit: this.limits.window,
        sort_by: 'start_time',
        sort_order: 'desc',
      });
    } catch (err) {
      if (err instanceof FlintError && err.code === 'memory_exporter_not_enabled') return this.unavailable('traces_not_stored', err.message);
      throw err;
    }
    if (list === undefined)
      return this.unavailable('module_not_loaded', 'flint-observability is not loaded: edges between functions are learned from its traces');

    // The traces in the window, newest first, with their newest root's start.
    const inWindow = new Map<string, number>();
    for (const span of list.spans) {
      const start = span.start_time_unix_nano / 1e6;
      const known = inWindow.get(span.trace_id);
      if (known === undefined || start > known) inWindow.set(span.trace_id, start);
    }
    for (const id of this.traces.keys()) if (!inWindow.has(id)) this.traces.delete(id);

    const now = Date.now();
    const fresh: [string, number][] = [];
    const again: [string, number][] = [];
    for (const [id, startMs] of inWindow) {
      const cached = this.traces.get(id);
      if (!cached) fresh.push([id, startMs]);
      else if (!cached.settled && now - cached.readAt >= REREAD_MS) again.push([id, startMs]);
    }
    const todo = [...fresh, ...again];
    const batch = todo.slice(0, this.limits.perRefresh);
    let read = 0;
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const [id, startMs] = batch[next++]!;
        try {
          const tree = await this.link.call<{ roots: TraceTreeSpan[] }>('engine::traces::tree', { trace_id: id });
          const { observations, triggers } = edgesOfTrace(tree.roots);
          const readAt = Date.now();
          this.traces.set(id, { observations, triggers, startMs, settled: readAt - startMs >= this.limits.settleMs, readAt });
          read++;
        } catch {
          // Dropped by the engine meanwhile, or the engine went away: tried again next time.
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, batch.length) }, worker));

    const totals = new Map<string, EdgeTotals>();
    const triggers = new Map<string, TriggerSighting>();
    for (const t of this.traces.values()) {
      aggregateEdges(t.observations, totals);
      for (const s of t.triggers) triggers.set(s.trigger_id, s);
    }
    return {
      available: true,
      edges: [...totals.values()],
      triggers: [...triggers.values()],
      window: this.traces.size,
      read,
      pending: todo.length - batch.length,
    };
  }

  private unavailable(reason: SpanStoreUnavailableReason, detail: string): TraceEdgesResult {
    this.traces.clear();
    return { available: false, reason, detail, edges: [], triggers: [], window: 0, read: 0, pending: 0 };
  }
}

/** Where the Flow layout is kept. */
export const LAYOUT_SCOPE = 'flint-console';
export const LAYOUT_KEY = 'flow-layout';

/**
 * The saved node positions: `state::get`/`state::set` in scope `flint-console`, key `flow-layout`, or this
 * console's memory when flint-state is not loaded.
 */
export class FlowLayoutStore {
  private memory: Record<string, FlowPosition> = {};

  constructor(private readonly link: EngineLink) {}

  async get(): Promise<FlowLayout> {
    let value: unknown;
    try {
      value = await this.link.call('state::get', { scope: LAYOUT_SCOPE, key: LAYOUT_KEY });
    } catch (err) {
      if (missingFunction(err)) return { positions: { ...this.memory }, stored: 'memory' };
      throw err;
    }
    return { positions: positionsOf(value), stored: 'state' };
  }

  async set(positions: Record<string, FlowPosition>): Promise<FlowLayout> {
    try {
      await this.link.call('state::set', { scope: LAYOUT_SCOPE, key: LAYOUT_KEY, value: { positions, updated_at: Date.now() } });
    } catch (err) {
      if (!missingFunction(err)) throw err;
      this.memory = { ...positions };
      return { positions: { ...this.memory }, stored: 'memory' };
    }
    return { positions, stored: 'state' };
  }
}

const missingFunction = (err: unknown) => err instanceof FlintError && err.code === 'function_not_found';

/** The positions of a stored layout value (anything malformed is left out). */
export function positionsOf(value: unknown): Record<string, FlowPosition> {
  const out: Record<string, FlowPosition> = {};
  const positions = value && typeof value === 'object' ? (value as { positions?: unknown }).positions : undefined;
  if (!positions || typeof positions !== 'object' || Array.isArray(positions)) return out;
  for (const [id, p] of Object.entries(positions as Record<string, unknown>)) {
    if (!p || typeof p !== 'object') continue;
    const { x, y } = p as { x?: unknown; y?: unknown };
    if (typeof x === 'number' && Number.isFinite(x) && typeof y === 'number' && Number.isFinite(y)) out[id] = { x, y };
  }
  return out;
}

/** Registry listings are read again after this long even without a change event (a missed event cannot stick). */
const REGISTRY_MAX_AGE_MS = 30_000;

/**
 * Every function and trigger (internal ones included), read once and again only after a change (the
 * engine's `functions`/`triggers`/`workers` events the console listens to, a bridge reconnection) or
 * 30 s: the Flow page refreshes every few seconds, and the lists can be large.
 */
export class RegistryCache {
  private cached: Promise<{ functions: FunctionInfo[]; triggers: TriggerInfo[] }> | undefined;
  private readAt = 0;

  constructor(private readonly link: EngineLink) {
    link.onEvent((event) => {
      if (event.type !== 'state') this.cached = undefined;
    });
  }

  get(): Promise<{ functions: FunctionInfo[]; triggers: TriggerInfo[] }> {
    if (!this.cached || Date.now() - this.readAt > REGISTRY_MAX_AGE_MS) {
      this.readAt = Date.now();
      const reading = Promise.all([
        this.link.call<{ functions: FunctionInfo[] }>(EngineFunctions.LIST_FUNCTIONS, { include_internal: true }),
        this.link.call<{ triggers: TriggerInfo[] }>(EngineFunctions.LIST_TRIGGERS, { include_internal: true }),
      ]).then(([f, t]) => ({ functions: f.functions, triggers: t.triggers }));
      this.cached = reading;
      // A failed reading is not kept.
      reading.catch(() => {
        if (this.cached === reading) this.cached = undefined;
      });
    }
    return this.cached;
  }
}

interface FlowState {
  traces: FlowTraceCache;
  layout: FlowLayoutStore;
  registry: RegistryCache;
}

const caches = new WeakMap<EngineLink, FlowState>();

/** The Flow page's state of a console's engine link (one per console server). */
export function flowStateOf(link: EngineLink): FlowState {
  let state = caches.get(link);
  if (!state) {
    state = { traces: new FlowTraceCache(link), layout: new FlowLayoutStore(link), registry: new RegistryCache(link) };
    caches.set(link, state);
  }
  return state;
}
