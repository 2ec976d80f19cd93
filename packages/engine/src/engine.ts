import type { FunctionInfo } from '@flint/protocol';
import { ADAPTERS } from './adapters/index.js';
import { loadConfig } from './config/load.js';
import type { EngineConfig } from './config/schema.js';
import { AdapterTable } from './core/adapter-table.js';
import { BridgeServer } from './core/bridge/server.js';
import { warnIfExposed } from './core/bridge/upgrade-guard.js';
import { ChannelManager } from './core/channels.js';
import { type EngineCore, ModuleScope } from './core/context.js';
import { EnqueueRouter } from './core/enqueue.js';
import { RegistryEvents } from './core/events.js';
import { warnIfCapsExceedFileLimit } from './core/file-limit.js';
import { FunctionRegistry } from './core/functions.js';
import { HookHub } from './core/hooks.js';
import { Invoker } from './core/invoker.js';
import { type Holdup, ModuleRunner } from './core/lifecycle.js';
import { urlOf } from './core/listen.js';
import { LogTap } from './core/log-tap.js';
import { type Logger, createLogger, logTapOf } from './core/logger.js';
import type { AdapterFactory, InvokeOptions, ModuleDefinition } from './core/module-api.js';
import { PayloadValidation } from './core/payload-validation.js';
import { TelemetryBuffer } from './core/telemetry-buffer.js';
import { TriggerRegistry } from './core/triggers.js';
import { WorkerRegistry } from './core/workers.js';
import { BUILTIN_MODULES, engineModule } from './modules/index.js';

export interface EngineOptions {
  /** Config file (`--config`). Without it `./flint-config.yaml` is used when present, else the embedded defaults. */
  configPath?: string;
  /** Config as an object instead of a file. */
  config?: unknown;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra module definitions (embedding, tests); they may replace built-in ones by name. */
  modules?: ModuleDefinition[];
  /** Extra adapters (embedding, tests), added to the built-in table. */
  adapters?: AdapterFactory[];
  /** The engine's logger; make it with `createLogger` so that the module API's log tap sees its records. */
  logger?: Logger;
}

export interface EngineStats {
  workers: number;
  functions: number;
  triggers: number;
  pendingInvocations: number;
  /** Void (fire-and-forget) calls the engine refused since it started: over the caller's cap, no provider, bad payload, worker overloaded. */
  droppedVoidCalls: number;
  channels: number;
  /** Telemetry frames (and their bytes) kept for the modules that consume telemetry. */
  telemetryFrames: number;
  telemetryBytes: number;
  /**
   * Telemetry frames (and bytes) dropped since start: received while no module consumed telemetry,
   * or let go to stay within `telemetry.buffer_frames` / `telemetry.buffer_bytes`.
   */
  telemetryDroppedFrames: number;
  telemetryDroppedBytes: number;
}

/** What a shutdown left behind: modules still draining or stopping at `shutdown_timeout_ms`. */
export interface ShutdownReport {
  holdups: Holdup[];
}

export interface Engine {
  readonly config: EngineConfig;
  readonly logger: Logger;
  /** `ws://host:port` of the bridge (valid after start). */
  readonly bridgeUrl: string;
  /** The token bridge sockets must present (`bridge.auth_token`, else `FLINT_BRIDGE_TOKEN`), if any: for the workers the engine's host starts. */
  readonly bridgeToken: string | undefined;
  /** The modules loaded from the config, in start order. */
  readonly moduleNames: string[];
  start(): Promise<void>;
  /** Graceful shutdown: stop accepting, drain modules, fail in-flight calls, close workers, stop modules. */
  stop(): Promise<ShutdownReport>;
  listeners(): { name: string; url: string }[];
  stats(): EngineStats;
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<unknown>;
  listFunctions(includeInternal?: boolean): FunctionInfo[];
}

/** A module's stop still gets this long when the drains used up the shutdown deadline (stores flush there). */
const STOP_GRACE_MS = 1000;

/** Builds an engine from config without opening any port. Throws ConfigError on invalid config. */
export function createEngine(options: EngineOptions = {}): Engine {
  const known = [...(options.modules ?? []), ...BUILTIN_MODULES.filter((b) => !options.modules?.some((m) => m.name === b.name))];
  const adapters = new AdapterTable([...ADAPTERS, ...(options.adapters ?? [])]);
  const env = options.env ?? process.env;
  const config = loadConfig({ path: options.configPath, object: options.config, cwd: options.cwd, env, modules: known, adapters });
  const logger = options.logger ?? createLogger({ level: config.log.level, format: config.log.format });

  const events = new RegistryEvents(logger);
  const functions = new FunctionRegistry(events, new PayloadValidation(config.validate_payloads, logger), logger.child({ component: 'functions' }));
  // The config's token wins; without one, FLINT_BRIDGE_TOKEN (an empty value counts as unset).
  const access = { allowedOrigins: config.bridge.allowed_origins, authToken: config.bridge.auth_token ?? (env.FLINT_BRIDGE_TOKEN || undefined) };
  const workers = new WorkerRegistry(events);
  const triggers = new TriggerRegistry(logger.child({ component: 'triggers' }), events, (t, owner, outcome) => {
    if (owner && !owner.closed) owner.send({ type: 'triggerregistrationresult', id: t.id, trigger_type: t.type, function_id: t.function_id, ...outcome });
  });
  const hooks = new HookHub(logger);
  const invoker = new Invoker(
    functions,
    { defaultTimeoutMs: config.invocation_timeout_ms, maxCallsInFlightPerWorker: config.max_invocations_per_worker },
    logger.child({ component: 'invoker' }),
    hooks,
  );
  const channels = new ChannelManager(
    { defaultBufferSize: config.channels.default_buffer_size, ttlMs: config.channels.ttl_ms, maxPerOwner: config.channels.max_per_worker },
    logger,
  );
  const telemetry = new TelemetryBuffer(
    { maxFrames: config.telemetry.buffer_frames, maxBytes: config.telemetry.buffer_bytes },
    logger.child({ component: 'telemetry' }),
  );
  const enqueue = new EnqueueRouter();
  const bridge = new BridgeServer(
    { functions, workers, invoker, triggers, channels, telemetry, enqueue, logger: logger.child({ component: 'bridge' }) },
    {
      host: config.bridge.host,
      port: config.bridge.port,
      maxFrameBytes: config.bridge.max_frame_bytes,
      pingIntervalMs: config.bridge.ping_interval_ms,
      maxOutboundBytes: config.bridge.max_outbound_buffer_bytes,
      triggerAckTimeoutMs: config.bridge.trigger_ack_timeout_ms,
      maxConnections: config.bridge.max_connections,
      handshakeTimeoutMs: config.bridge.handshake_timeout_ms,
      portSetting: `bridge.port${config.fromEnv['bridge.port'] ? ` (from ${config.fromEnv['bridge.port']})` : ''}`,
      access,
    },
  );
  const core: EngineCore = {
    functions,
    workers,
    triggers,
    invoker,
    channels,
    telemetry,
    enqueue,
    hooks,
    events,
    logTap: logTapOf(logger) ?? new LogTap(),
    adapters,
    configDir: config.configDir,
    fromEnv: config.fromEnv,
    logger,
  };
  const loaded = config.modules.map((m) => ({ def: known.find((k) => k.name === m.name) as ModuleDefinition, config: m.config }));
  const scopes = [
    new ModuleScope(engineModule.create({}), {}, core),
    ...loaded.map(({ def, config }, i) => new ModuleScope(def.create(config), config, core, `modules[${i}].config`)),
  ];
  const runner = new ModuleRunner(scopes, logger);

  let bridgeUrl = '';
  let state: 'created' | 'started' | 'stopping' | 'stopped' = 'created';
  let stopping: Promise<ShutdownReport> | undefined;

  const shutdown = async (): Promise<ShutdownReport> => {
    state = 'stopping';
    const deadline = Date.now() + config.shutdown_timeout_ms;
    bridge.stopAccepting();
    runner.stopAccepting();
    const holdups = await runner.drain(deadline);
    invoker.shutdown();
    await bridge.closeConnections();
    holdups.push(...(await runner.stop(Math.max(deadline, Date.now() + STOP_GRACE_MS))));
    channels.stop();
    state = 'stopped';
    return { holdups };
  };

  const engine: Engine = {
    config,
    logger,
    get bridgeUrl() {
      return bridgeUrl;
    },
    bridgeToken: access.authToken,
    moduleNames: loaded.map((m) => m.def.name),
    async start() {
      if (state !== 'created') throw new Error('engine already started');
      state = 'started';
      const address = await bridge.listen();
      bridgeUrl = urlOf('ws', address.host, address.port);
      warnIfExposed(address.host, access, logger.child({ component: 'bridge' }));
      try {
        await runner.start();
      } catch (err) {
        await engine.stop();
        throw err;
      }
      triggers.warnAboutParked();
      warnIfCapsExceedFileLimit(
        [{ setting: 'bridge.max_connections', maxConnections: config.bridge.max_connections }, ...scopes.flatMap((s) => s.caps)],
        logger,
      );
    },
    stop() {
      if (state === 'created') {
        state = 'stopped';
        channels.stop();
      }
      // Every caller gets the report of the one shutdown (an engine never started has nothing to report).
      stopping ??= state === 'stopped' ? Promise.resolve({ holdups: [] }) : shutdown();
      return stopping;
    },
    listeners() {
      return [{ name: 'bridge', url: bridgeUrl }, ...scopes.flatMap((s) => s.listeners.map((l) => ({ name: l.name, url: l.url })))];
    },
    stats() {
      const t = telemetry.counts;
      return {
        workers: workers.size,
        functions: functions.size,
        triggers: triggers.size,
        pendingInvocations: invoker.pendingCount,
        droppedVoidCalls: invoker.droppedVoidCalls,
        channels: channels.size,
        telemetryFrames: t.frames,
        telemetryBytes: t.bytes,
        telemetryDroppedFrames: t.droppedFrames,
        telemetryDroppedBytes: t.droppedBytes,
      };
    },
    invoke: (functionId, data, opts) => invoker.call(functionId, data, opts),
    listFunctions: (includeInternal) => functions.list(includeInternal),
  };
  return engine;
}

/** Creates and starts an engine. */
export async function startEngine(options: EngineOptions = {}): Promise<Engine> {
  const engine = createEngine(options);
  await engine.start();
  return engine;
}
