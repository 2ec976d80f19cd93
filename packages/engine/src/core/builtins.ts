import { EngineFunctions, EngineTriggers, FlintError, LOG_LEVELS, type WorkerInfo } from '@flint/protocol';
import type { ChannelManager } from './channels.js';
import type { WorkerConnection, WorkerMetadata } from './connection.js';
import type { Invoker } from './invoker.js';
import type { Logger } from './logger.js';
import type { TriggerRecord } from './module-api.js';
import type { Registry } from './registry.js';
import type { TriggerManager } from './triggers.js';

export interface BuiltinDeps {
  registry: Registry;
  triggers: TriggerManager;
  invoker: Invoker;
  channels: ChannelManager;
  logger: Logger;
  /** Delay that coalesces a burst of registrations into one functions-available event. */
  functionsDebounceMs: number;
}

const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

function input(data: unknown): Record<string, unknown> {
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new FlintError('invalid_payload', 'payload must be an object');
  return data as Record<string, unknown>;
}

function optionalBoolean(data: Record<string, unknown>, key: string): boolean {
  const value = data[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new FlintError('invalid_payload', `${key} must be a boolean`);
  return value;
}

export function workerInfo(conn: WorkerConnection): WorkerInfo {
  const m = conn.metadata;
  const info: WorkerInfo = {
    id: conn.id,
    name: m?.name ?? null,
    runtime: m?.runtime ?? 'unknown',
    version: m?.version ?? null,
    os: m?.os ?? null,
    ip_address: conn.ipAddress,
    internal: false,
    status: m === undefined ? 'connected' : conn.executing > 0 ? 'busy' : 'available',
    connected_at_ms: conn.connectedAt,
    function_count: conn.functions.size,
    functions: [...conn.functions],
    active_invocations: conn.executing,
    latest_metrics: null,
  };
  if (m?.pid !== undefined) info.pid = m.pid;
  if (m?.isolation !== undefined) info.isolation = m.isolation;
  return info;
}

/** Registers the engine's built-in functions and the two engine trigger types. */
export function registerBuiltins(deps: BuiltinDeps): void {
  const { registry, triggers, channels, logger } = deps;
  const fn = registry.registerInternalFunction.bind(registry, 'engine');

  fn(
    {
      id: EngineFunctions.LIST_FUNCTIONS,
      description: 'List registered functions with their discovery metadata',
      request_format: object({ include_internal: { type: 'boolean' } }),
      response_format: object({ functions: { type: 'array' } }, ['functions']),
    },
    (data) => ({ functions: registry.listFunctions(optionalBoolean(input(data), 'include_internal')) }),
  );
  fn(
    {
      id: EngineFunctions.LIST_TRIGGERS,
      description: 'List registered triggers',
      request_format: object({ include_internal: { type: 'boolean' } }),
      response_format: object({ triggers: { type: 'array' } }, ['triggers']),
    },
    (data) => ({ triggers: triggers.list(optionalBoolean(input(data), 'include_internal')) }),
  );
  fn(
    {
      id: EngineFunctions.LIST_TRIGGER_TYPES,
      description: 'List trigger types and who provides them',
      request_format: object({ include_internal: { type: 'boolean' } }),
      response_format: object({ trigger_types: { type: 'array' } }, ['trigger_types']),
    },
    (data) => ({ trigger_types: triggers.listTypes(optionalBoolean(input(data), 'include_internal')) }),
  );
  fn(
    {
      id: EngineFunctions.LIST_WORKERS,
      description: 'List connected workers',
      request_format: object({ worker_id: { type: 'string' } }),
      response_format: object({ workers: { type: 'array' }, timestamp: { type: 'number' } }, ['workers', 'timestamp']),
    },
    (data) => {
      const { worker_id } = input(data);
      if (worker_id !== undefined && typeof worker_id !== 'string') throw new FlintError('invalid_payload', 'worker_id must be a string');
      const rows = [...registry.workers.values()]
        // Like upstream, connections that never announced themselves (CLIs, raw sockets) are hidden unless asked for.
        .filter((c) => (worker_id ? c.id === worker_id : c.metadata !== undefined))
        .map(workerInfo)
        .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.id.localeCompare(b.id));
      return { workers: rows, timestamp: Date.now() };
    },
  );
  fn({ id: EngineFunctions.REGISTER_WORKER, description: 'Annotate the calling worker with its runtime metadata' }, (data, ctx) => {
    const conn = ctx.callerWorkerId ? registry.workers.get(ctx.callerWorkerId) : undefined;
    if (!conn) throw new FlintError('invalid_payload', 'engine::workers::register must be called by a connected worker');
    const d = input(data);
    const str = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : undefined);
    const meta: WorkerMetadata = {
      name: str('name'),
      runtime: str('runtime') ?? 'unknown',
      version: str('version'),
      os: str('os'),
      pid: typeof d.pid === 'number' ? d.pid : undefined,
      isolation: typeof d.isolation === 'string' ? d.isolation : null,
      telemetry: typeof d.telemetry === 'object' && d.telemetry !== null ? (d.telemetry as Record<string, unknown>) : undefined,
    };
    conn.metadata = meta;
    registry.emit('workerEvent', 'worker_metadata_updated', conn.id);
    logger.info({ worker_id: conn.id, pid: meta.pid }, `worker ${meta.name ?? conn.id} (${meta.runtime} ${meta.version ?? ''}) connected`.trim());
    return { success: true };
  });
  fn(
    {
      id: EngineFunctions.CREATE_CHANNEL,
      description: 'Create a streaming channel; returns a reader and a writer reference',
      request_format: object({ buffer_size: { type: 'integer', minimum: 1, maximum: 1024 } }),
    },
    (data) => {
      const { buffer_size } = input(data);
      if (buffer_size !== undefined && (typeof buffer_size !== 'number' || !Number.isFinite(buffer_size))) {
        throw new FlintError('invalid_payload', 'buffer_size must be a number');
      }
      const channel = channels.create(buffer_size as number | undefined);
      return { writer: channel.writerRef, reader: channel.readerRef };
    },
  );
  for (const level of LOG_LEVELS) {
    fn(
      {
        id: `engine::log::${level}`,
        description: `Write a ${level} line to the engine log`,
        request_format: object(
          { message: { type: 'string' }, data: {}, trace_id: { type: 'string' }, span_id: { type: 'string' }, service_name: { type: 'string' } },
          ['message'],
        ),
      },
      (data, ctx) => {
        const d = input(data);
        if (typeof d.message !== 'string') throw new FlintError('invalid_payload', 'message must be a string');
        const fields = {
          source: 'worker',
          worker_id: ctx.callerWorkerId,
          trace_id: d.trace_id,
          span_id: d.span_id,
          service_name: d.service_name,
          data: d.data,
        };
        logger[level](fields, d.message);
        return undefined;
      },
    );
  }

  registerEngineTriggerTypes(deps);
}

function registerEngineTriggerTypes(deps: BuiltinDeps): void {
  const { registry, triggers, invoker } = deps;
  const functionSubscribers = new Map<string, TriggerRecord>();
  const workerSubscribers = new Map<string, TriggerRecord>();
  const subscribe = (map: Map<string, TriggerRecord>) => ({
    registerTrigger: (t: TriggerRecord) => void map.set(t.id, t),
    unregisterTrigger: (t: TriggerRecord) => void map.delete(t.id),
  });

  triggers.registerType(
    { id: EngineTriggers.FUNCTIONS_AVAILABLE, description: 'Fires when the set of available functions changes' },
    subscribe(functionSubscribers),
  );
  triggers.registerType(
    { id: EngineTriggers.WORKERS_AVAILABLE, description: 'Fires when a worker connects, disconnects or updates its metadata' },
    subscribe(workerSubscribers),
  );

  let lastIds = '';
  let scheduled = false;
  const fireFunctions = () => {
    scheduled = false;
    const functions = registry.listFunctions();
    const ids = functions
      .map((f) => f.function_id)
      .sort()
      .join('\n');
    if (ids === lastIds) return;
    lastIds = ids;
    for (const t of functionSubscribers.values()) invoker.callVoid(t.function_id, { event: 'functions_changed', functions });
  };
  registry.on('functionsChanged', () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(fireFunctions, deps.functionsDebounceMs).unref();
  });
  registry.on('workerEvent', (event, workerId) => {
    for (const t of workerSubscribers.values()) invoker.callVoid(t.function_id, { event, worker_id: workerId });
  });
}
