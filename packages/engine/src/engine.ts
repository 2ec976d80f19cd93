import type { FunctionInfo } from '@flint/protocol';
import { openKvStore } from './adapters/kv/index.js';
import { loadConfig } from './config/load.js';
import type { EngineConfig } from './config/schema.js';
import { BridgeServer } from './core/bridge-server.js';
import { registerBuiltins } from './core/builtins.js';
import { ChannelManager } from './core/channels.js';
import { Invoker } from './core/invoker.js';
import { type Logger, createLogger } from './core/logger.js';
import type { EngineModule, InvokeOptions, ModuleContext, ModuleDefinition } from './core/module-api.js';
import { Registry } from './core/registry.js';
import { TelemetryBuffer } from './core/telemetry-buffer.js';
import { TriggerManager } from './core/triggers.js';
import { BUILTIN_MODULES } from './modules/index.js';

export interface EngineOptions {
  /** Config file (`--config`). Without it `./flint-config.yaml` is used when present, else the embedded defaults. */
  configPath?: string;
  /** Config as an object instead of a file. */
  config?: unknown;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra module definitions (embedding, tests); they may replace built-in ones by name. */
  modules?: ModuleDefinition[];
  logger?: Logger;
}

export interface EngineStats {
  workers: number;
  functions: number;
  triggers: number;
  pendingInvocations: number;
  channels: number;
  telemetryFrames: number;
}

export interface Engine {
  readonly config: EngineConfig;
  readonly logger: Logger;
  /** `ws://host:port` of the bridge (valid after start). */
  readonly bridgeUrl: string;
  readonly moduleNames: string[];
  start(): Promise<void>;
  /** Graceful shutdown: stop accepting, fail in-flight calls, drain workers, stop modules. */
  stop(): Promise<void>;
  listeners(): { name: string; url: string }[];
  stats(): EngineStats;
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<unknown>;
  listFunctions(includeInternal?: boolean): FunctionInfo[];
}

/** Builds an engine from config without opening any port. Throws ConfigError on invalid config. */
export function createEngine(options: EngineOptions = {}): Engine {
  const known = [...(options.modules ?? []), ...BUILTIN_MODULES.filter((b) => !options.modules?.some((m) => m.name === b.name))];
  const config = loadConfig({ path: options.configPath, object: options.config, cwd: options.cwd, env: options.env, modules: known });
  const logger = options.logger ?? createLogger({ level: config.log.level, format: config.log.format });

  const registry = new Registry();
  const triggers = new TriggerManager(logger.child({ component: 'triggers' }), (t, owner, outcome) => {
    if (owner && !owner.closed) owner.send({ type: 'triggerregistrationresult', id: t.id, trigger_type: t.type, function_id: t.function_id, ...outcome });
  });
  const invoker = new Invoker(
    registry,
    { defaultTimeoutMs: config.invocation_timeout_ms, maxCallsInFlightPerWorker: config.max_invocations_per_worker },
    logger.child({ component: 'invoker' }),
  );
  const channels = new ChannelManager({ defaultBufferSize: config.channels.default_buffer_size, ttlMs: config.channels.ttl_ms }, logger);
  const telemetry = new TelemetryBuffer(config.telemetry.buffer_frames);
  const bridge = new BridgeServer(
    { registry, invoker, triggers, channels, telemetry, logger: logger.child({ component: 'bridge' }) },
    {
      host: config.bridge.host,
      port: config.bridge.port,
      maxFrameBytes: config.bridge.max_frame_bytes,
      pingIntervalMs: config.bridge.ping_interval_ms,
      maxOutboundBytes: config.bridge.max_outbound_buffer_bytes,
      triggerAckTimeoutMs: config.bridge.trigger_ack_timeout_ms,
    },
  );
  registerBuiltins({ registry, triggers, invoker, channels, logger, functionsDebounceMs: 20 });

  const modules: EngineModule[] = config.modules.map((m) => {
    const def = known.find((k) => k.name === m.name) as ModuleDefinition;
    return def.create(m.config);
  });

  const contextFor = (module: EngineModule, moduleConfig: unknown): ModuleContext => {
    const moduleLogger = logger.child({ module: module.name });
    return {
      config: moduleConfig,
      logger: moduleLogger,
      configDir: config.configDir,
      registerFunction: (def, handler) => registry.registerInternalFunction(module.name, def, handler),
      registerTriggerType: (def, provider) => triggers.registerType(def, provider),
      invoke: (functionId, data, opts) => invoker.call(functionId, data, opts),
      dispatch: (functionId, data, opts, done) => invoker.callWith(functionId, data, opts, done),
      invokeVoid: (functionId, data, opts) => invoker.callVoid(functionId, data, opts),
      hasFunction: (functionId) => registry.functions.has(functionId),
      listFunctions: (includeInternal) => registry.listFunctions(includeInternal),
      channels,
      telemetry,
      openKvStore: (adapter) =>
        openKvStore(adapter, { configDir: config.configDir, log: { warn: (m) => moduleLogger.warn(m), info: (m) => moduleLogger.info(m) } }),
      setEnqueueHandler: (handler) => {
        invoker.enqueueHandler = handler;
      },
    };
  };

  let bridgeUrl = '';
  let state: 'created' | 'started' | 'stopping' | 'stopped' = 'created';
  let stopping: Promise<void> | undefined;

  const engine: Engine = {
    config,
    logger,
    get bridgeUrl() {
      return bridgeUrl;
    },
    moduleNames: modules.map((m) => m.name),
    async start() {
      if (state !== 'created') throw new Error('engine already started');
      state = 'started';
      const address = await bridge.listen();
      bridgeUrl = `ws://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
      try {
        for (const [i, module] of modules.entries()) await module.start(contextFor(module, config.modules[i]?.config));
      } catch (err) {
        await engine.stop();
        throw err;
      }
    },
    stop() {
      if (state === 'created' || state === 'stopped') {
        state = 'stopped';
        channels.stop();
        return Promise.resolve();
      }
      stopping ??= (async () => {
        state = 'stopping';
        bridge.stopAccepting();
        for (const module of modules) await module.drain?.();
        invoker.shutdown();
        await bridge.closeConnections();
        for (const module of [...modules].reverse()) {
          try {
            await module.stop?.();
          } catch (err) {
            logger.error({ module: module.name }, `module failed to stop cleanly: ${String(err)}`);
          }
        }
        channels.stop();
        state = 'stopped';
      })();
      return stopping;
    },
    listeners() {
      return [{ name: 'bridge', url: bridgeUrl }, ...modules.flatMap((m) => m.listeners?.() ?? [])];
    },
    stats() {
      return {
        workers: registry.workers.size,
        functions: registry.functions.size,
        triggers: triggers.size,
        pendingInvocations: invoker.pendingCount,
        channels: channels.size,
        telemetryFrames: telemetry.frames().length,
      };
    },
    invoke: (functionId, data, opts) => invoker.call(functionId, data, opts),
    listFunctions: (includeInternal) => registry.listFunctions(includeInternal),
  };
  return engine;
}

/** Creates and starts an engine. */
export async function startEngine(options: EngineOptions = {}): Promise<Engine> {
  const engine = createEngine(options);
  await engine.start();
  return engine;
}
