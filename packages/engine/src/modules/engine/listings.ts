import { EngineFunctions, FlintError } from '@flint/protocol';
import type { ModuleContext, WorkerMetadata } from '../../core/module-api.js';
import { payloadObject } from '../../lib/payload.js';
import { plural } from '../../lib/plural.js';

const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

function optionalBoolean(data: Record<string, unknown>, key: string): boolean {
  const value = data[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new FlintError('invalid_payload', `${key} must be a boolean`);
  return value;
}

const includeInternal = (data: unknown) => optionalBoolean(payloadObject(data, { optional: true }), 'include_internal');

/** The engine's listings (functions, triggers, trigger types, workers), worker announcements and channel creation. */
export function registerListings(ctx: ModuleContext): void {
  const { registry } = ctx;
  const listings = [
    [EngineFunctions.LIST_FUNCTIONS, 'functions', 'List registered functions with their discovery metadata', registry.functions],
    [EngineFunctions.LIST_TRIGGERS, 'triggers', 'List registered triggers', registry.triggers],
    [EngineFunctions.LIST_TRIGGER_TYPES, 'trigger_types', 'List trigger types and who provides them', registry.triggerTypes],
  ] as const;
  for (const [id, key, description, list] of listings) {
    const request_format = object({ include_internal: { type: 'boolean' } });
    const response_format = object({ [key]: { type: 'array' } }, [key]);
    ctx.registerFunction({ id, description, request_format, response_format }, (data) => ({ [key]: list(includeInternal(data)) }));
  }
  ctx.registerFunction(
    {
      id: EngineFunctions.LIST_WORKERS,
      description: 'List connected workers',
      request_format: object({ worker_id: { type: 'string' } }),
      response_format: object({ workers: { type: 'array' }, timestamp: { type: 'number' } }, ['workers', 'timestamp']),
    },
    (data) => {
      const { worker_id } = payloadObject(data, { optional: true });
      if (worker_id !== undefined && typeof worker_id !== 'string') throw new FlintError('invalid_payload', 'worker_id must be a string');
      // Like upstream, connections that never announced themselves (CLIs, raw sockets) are hidden unless asked for by id.
      const workers = worker_id ? [registry.worker(worker_id)].filter((w) => w !== undefined) : registry.workers();
      return { workers, timestamp: Date.now() };
    },
  );
  ctx.registerFunction({ id: EngineFunctions.REGISTER_WORKER, description: 'Annotate the calling worker with its runtime metadata' }, (data, call) => {
    const d = payloadObject(data, { optional: true });
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
    if (!call.callerWorkerId || !registry.describeWorker(call.callerWorkerId, meta)) {
      throw new FlintError('invalid_payload', 'engine::workers::register must be called by a connected worker');
    }
    const functionCount = registry.worker(call.callerWorkerId)?.function_count ?? 0;
    // "node SDK 0.1.0": `version` is the worker SDK's version, not the runtime's.
    const runtime = meta.version ? `${meta.runtime} SDK ${meta.version}` : meta.runtime;
    ctx.logger.info(
      { worker_id: call.callerWorkerId, worker_name: meta.name, function_count: functionCount, pid: meta.pid },
      `worker ${meta.name ?? call.callerWorkerId} connected (id ${call.callerWorkerId}, ${runtime}, ${plural(functionCount, 'function')})`,
    );
    return { success: true };
  });
  ctx.registerFunction(
    {
      id: EngineFunctions.CREATE_CHANNEL,
      description: 'Create a streaming channel; returns a reader and a writer reference',
      request_format: object({ buffer_size: { type: 'integer', minimum: 1, maximum: 1024 } }),
    },
    (data, call) => {
      const { buffer_size } = payloadObject(data, { optional: true });
      if (buffer_size !== undefined && (typeof buffer_size !== 'number' || !Number.isFinite(buffer_size))) {
        throw new FlintError('invalid_payload', 'buffer_size must be a number');
      }
      // A worker's channels count towards its channels.max_per_worker (a module's are not capped).
      const channel = ctx.channels.create(buffer_size as number | undefined, call.callerWorkerId);
      return { writer: channel.writerRef, reader: channel.readerRef };
    },
  );
}
