import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { FunctionInfo } from '@flint/protocol';
import { ADAPTERS } from './adapters/index.js';
import { Cluster } from './cluster/cluster.js';
import { NatsTransport } from './cluster/nats.js';
import { RedisTransport } from './cluster/redis.js';
import type { ClusterTransport } from './cluster/transport.js';
import { ConfigError, loadConfig } from './config/load.js';
import type { BridgeListenerConfig, EngineConfig } from './config/schema.js';
import { AdapterTable } from './core/adapter-table.js';
import { AccessGate } from './core/bridge/access/gate.js';
import type { AccessConfig } from './core/bridge/access/policy.js';
import { BridgeServer } from './core/bridge/server.js';
import { warnIfExposed } from './core/bridge/upgrade-guard.js';
import type { BridgeDeps } from './core/bridge/worker-session.js';
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
import { redactConfig } from './lib/redact.js';
import { ENGINE_VERSION } from './lib/version.js';
import { BUILTIN_MODULES, engineFunctionsModule } from './modules/index.js';

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
  /** Spare channel sockets waiting to be bound to a channel (`@flint/sdk` opens them ahead of need). */
  spareChannelSockets: number;
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

/** A listener's `access` config as the bridge takes it. */
function accessConfigOf(access: NonNullable<BridgeListenerConfig['access']>): AccessConfig {
  return {
    authFunctionId: access.auth_function_id,
    authTimeoutMs: access.auth_timeout_ms,
    middlewareFunctionId: access.middleware_function_id,
    middlewareTimeoutMs: access.middleware_timeout_ms,
    onFunctionRegistration: access.on_function_registration_function_id,
    onTriggerRegistration: access.on_trigger_registration_function_id,
    onTriggerTypeRegistration: access.on_trigger_type_registration_function_id,
    exposeFunctions: access.expose_functions,
  };
}

/** Reads a listener's certificate and key (relative paths against the config's folder); a file that cannot be read is a ConfigError naming the key. */
function readTls(tls: NonNullable<BridgeListenerConfig['tls']>, dir: string, path: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, key: string) => {
    try {
      return readFileSync(resolve(dir, file));
    } catch (err) {
      throw new ConfigError([{ path: `${path}.tls.${key}`, message: `cannot read ${resolve(dir, file)}: ${(err as Error).message}` }], undefined);
    }
  };
  const pair = { cert: read(tls.cert_file, 'cert_file'), key: read(tls.key_file, 'key_file') };
  try {
    createSecureContext(pair);
  } catch (err) {
    // OpenSSL's own words (`PEM routines::no start line`, `key values mismatch`), with the listener's keys.
    const message = `${resolve(dir, tls.cert_file)} and ${resolve(dir, tls.key_file)} are not a PEM certificate and its key: ${(err as Error).message}`;
    throw new ConfigError([{ path: `${path}.tls`, message }], undefined);
  }
  return pair;
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
  // A listener's own token wins; without one, FLINT_BRIDGE_TOKEN (an empty value counts as unset).
  const accessOf = (listener: BridgeListenerConfig) => ({
    allowedOrigins: listener.allowed_origins,
    authToken: listener.auth_token ?? (env.FLINT_BRIDGE_TOKEN || undefined),
  });
  const access = accessOf(config.bridge);
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
  const bridgeDeps: BridgeDeps = { functions, workers, invoker, triggers, channels, telemetry, enqueue, logger: logger.child({ component: 'bridge' }) };
  const bridges = config.bridges.map((listener, i) => {
    const fromEnv = config.fromEnv[`${listener.path}.port`];
    return {
      name: i === 0 ? 'bridge' : listener.path,
      listener,
      server: new BridgeServer(bridgeDeps, {
        host: listener.host,
        port: listener.port,
        maxFrameBytes: listener.max_frame_bytes,
        pingIntervalMs: listener.ping_interval_ms,
        maxOutboundBytes: listener.max_outbound_buffer_bytes,
        triggerAckTimeoutMs: listener.trigger_ack_timeout_ms,
        maxConnections: listener.max_connections,
        handshakeTimeoutMs: listener.handshake_timeout_ms,
        spareIdleMs: listener.spare_channel_idle_ms,
        portSetting: `${listener.path}.port${fromEnv ? ` (from ${fromEnv})` : ''}`,
        setting: listener.path,
        access: accessOf(listener),
        gate: listener.access ? new AccessGate(accessConfigOf(listener.access), invoker, bridgeDeps.logger) : undefined,
        tls: listener.tls ? readTls(listener.tls, config.configDir, listener.path) : undefined,
      }),
      url: '',
    };
  });
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
    new ModuleScope(
      engineFunctionsModule(() => about()),
      {},
      core,
    ),
    ...loaded.map(({ def, config }, i) => new ModuleScope(def.create(config), config, core, `modules[${i}].config`)),
  ];
  const runner = new ModuleRunner(scopes, logger);

  let bridgeUrl = '';
  let startedAt = 0;
  let cluster: Cluster | undefined;
  /** Joins the cluster (config `cluster`): an unreachable transport fails start-up. */
  const joinCluster = async (): Promise<void> => {
    const settings = config.cluster;
    if (!settings) return;
    const nodeId = settings.node_id ?? `${hostname().replace(/[^A-Za-z0-9_-]/g, '-')}-${process.pid}`;
    let transport: ClusterTransport;
    try {
      const open = settings.transport === 'redis' ? RedisTransport.open : NatsTransport.open;
      const url = settings.url ?? (settings.transport === 'redis' ? 'redis://127.0.0.1:6379' : 'nats://127.0.0.1:4222');
      transport = await open(url, `flint-${nodeId}`, settings.connect_timeout_ms);
    } catch (err) {
      throw new ConfigError([{ path: 'cluster.url', message: (err as Error).message }], config.configFile);
    }
    cluster = new Cluster(
      transport,
      { name: settings.name, nodeId, heartbeatMs: settings.heartbeat_ms, expireMs: settings.expire_ms, version: ENGINE_VERSION },
      { channels, functions, workers, triggers, invoker, events, logger },
      () => bridgeUrl,
    );
    core.remote = cluster;
    bridgeDeps.cluster = { channels: cluster.channels };
    const members = cluster;
    functions.registerInternalFunction(
      'flint-engine',
      {
        id: 'engine::cluster::members',
        description: 'The engines of the cluster: this one first, then the others it knows',
        request_format: { type: 'object' },
      },
      async () => ({ cluster: settings.name, node_id: nodeId, members: await members.members() }),
    );
  };
  const about = () => ({
    version: ENGINE_VERSION,
    started_at: startedAt,
    listeners: engine.listeners(),
    modules: loaded.map(({ def, config }) => ({ name: def.name, config: redactConfig(config) })),
  });
  let state: 'created' | 'started' | 'stopping' | 'stopped' = 'created';
  let stopping: Promise<ShutdownReport> | undefined;

  const shutdown = async (): Promise<ShutdownReport> => {
    state = 'stopping';
    // The other engines stop routing calls here first; calls they already forwarded are still answered.
    cluster?.leave();
    const deadline = Date.now() + config.shutdown_timeout_ms;
    for (const b of bridges) b.server.stopAccepting();
    runner.stopAccepting();
    const holdups = await runner.drain(deadline);
    invoker.shutdown();
    await Promise.all(bridges.map((b) => b.server.closeConnections()));
    holdups.push(...(await runner.stop(Math.max(deadline, Date.now() + STOP_GRACE_MS))));
    await cluster?.close();
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
      startedAt = Date.now();
      try {
        await joinCluster();
      } catch (err) {
        state = 'stopped';
        channels.stop();
        throw err;
      }
      try {
        for (const b of bridges) {
          const address = await b.server.listen();
          b.url = urlOf(b.listener.tls ? 'wss' : 'ws', address.host, address.port);
          warnIfExposed(address.host, accessOf(b.listener), bridgeDeps.logger, b.listener.path, Boolean(b.listener.access?.auth_function_id));
        }
      } catch (err) {
        for (const b of bridges) b.server.stopAccepting();
        await cluster?.close();
        throw err;
      }
      bridgeUrl = bridges[0]?.url ?? '';
      try {
        await runner.start();
      } catch (err) {
        await engine.stop();
        throw err;
      }
      cluster?.start();
      triggers.warnAboutParked();
      warnIfCapsExceedFileLimit(
        [
          ...bridges.map((b) => ({ setting: `${b.listener.path}.max_connections`, maxConnections: b.listener.max_connections })),
          ...scopes.flatMap((s) => s.caps),
        ],
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
      return [...bridges.map((b) => ({ name: b.name, url: b.url })), ...scopes.flatMap((s) => s.listeners.map((l) => ({ name: l.name, url: l.url })))];
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
        spareChannelSockets: channels.spareSockets,
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
