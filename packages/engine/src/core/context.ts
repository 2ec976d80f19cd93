import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { FlintError } from '@flint/protocol';
import { errorMessage } from '../lib/errors.js';
import { flushBurstLogs } from '../lib/log-burst.js';
import type { AdapterTable } from './adapter-table.js';
import type { AdapterInstance } from './api/adapters.js';
import type { BoundListener } from './api/listen.js';
import type { RemoteView } from './api/registry.js';
import type { ModuleTrigger, TriggerTypeProvider } from './api/triggers.js';
import type { ChannelManager } from './channels.js';
import { limitConnections } from './connection-cap.js';
import type { EnqueueRouter } from './enqueue.js';
import type { RegistryEvents } from './events.js';
import type { CapSetting } from './file-limit.js';
import type { FunctionRegistry } from './functions.js';
import type { HookHub } from './hooks.js';
import type { Invoker } from './invoker.js';
import { listen, urlOf } from './listen.js';
import type { LogTap } from './log-tap.js';
import type { Logger } from './logger.js';
import type { EngineModule, ModuleContext } from './module-api.js';
import type { TelemetryBuffer } from './telemetry-buffer.js';
import type { TriggerRegistry } from './triggers.js';
import type { WorkerRegistry } from './workers.js';
import { WebSocketServerWithKeepAlive } from './ws-server.js';

/** A module listener's connection cap and header time-out when it does not choose its own (ListenOptions). */
const DEFAULT_MAX_CONNECTIONS = 4096;
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** The engine's parts a module context is made of. */
export interface EngineCore {
  functions: FunctionRegistry;
  workers: WorkerRegistry;
  triggers: TriggerRegistry;
  invoker: Invoker;
  channels: ChannelManager;
  telemetry: TelemetryBuffer;
  enqueue: EnqueueRouter;
  hooks: HookHub;
  events: RegistryEvents;
  logTap: LogTap;
  adapters: AdapterTable;
  configDir: string;
  /** Config keys whose value came from `${VAR}` (`bridge.port` → `${FLINT_BRIDGE_PORT}`), for error messages. */
  fromEnv: Readonly<Record<string, string>>;
  logger: Logger;
  /** The other engines of the cluster, when `cluster` is configured: the listings show theirs too. */
  remote?: RemoteView;
}

/**
 * One module's context and everything it registered or opened through it, so that the engine can
 * stop its listeners accepting at drain and release the rest once the module has stopped.
 */
export class ModuleScope {
  readonly ctx: ModuleContext;
  readonly listeners: BoundListener[] = [];
  /** The connection cap of each listener, with the setting that chose it. */
  readonly caps: CapSetting[] = [];
  private readonly servers: Server[] = [];
  private readonly webSockets: WebSocketServerWithKeepAlive[] = [];
  private readonly triggers = new Map<string, () => Promise<void>>();
  private readonly adapters: AdapterInstance[] = [];
  /** Functions, trigger types, subscriptions, hooks, the queue role: undone at release, last first. */
  private readonly disposers: (() => void)[] = [];

  /**
   * @param configPath where the module's config is in the config file (`modules[1].config`), when
   *   it is listed there.
   */
  constructor(
    readonly module: EngineModule,
    config: unknown,
    private readonly core: EngineCore,
    private readonly configPath?: string,
  ) {
    const name = module.name;
    const logger = core.logger.child({ module: name });
    const { invoker, functions, triggers } = core;
    const own = <T extends () => void>(dispose: T): T => {
      this.disposers.push(dispose);
      return dispose;
    };
    this.ctx = {
      name,
      config,
      logger,
      configDir: core.configDir,
      registerFunction: (def, handler, options) => own(functions.registerInternalFunction(name, def, handler, options?.replaceable, options?.unlisted)),
      registerTriggerType: (def, provider) => own(triggers.registerType(def, provider as TriggerTypeProvider, name)),
      registerTrigger: (input) => this.registerTrigger(input),
      invoke: (functionId, data, opts) => invoker.call(functionId, data, opts, name),
      invokeWith: (functionId, data, opts, done) => invoker.callWith(functionId, data, opts, done, name),
      invokeVoid: (functionId, data, opts) => invoker.callVoid(functionId, data, opts, name),
      enqueue: (queue, functionId, data, trace) => core.enqueue.enqueue(queue, functionId, data, trace),
      provideEnqueue: (handler) => void own(core.enqueue.claim(name, handler)),
      delegateFunctions: (make) => void own(functions.claimDelegate(name, make)),
      registry: {
        hasFunction: (id) => functions.has(id),
        functions: (includeInternal) => functions.list(includeInternal),
        triggers: (includeInternal) => withRemote(triggers.list(includeInternal), core.remote, (r) => r.triggers()),
        triggerTypes: (includeInternal) => triggers.listTypes(includeInternal),
        workers: (includeAnonymous) => withRemote(core.workers.list(includeAnonymous), core.remote, (r) => r.workers()),
        worker: (id) => core.workers.info(id) ?? core.remote?.workers().find((w) => w.id === id),
        describeWorker: (id, metadata) => core.workers.describe(id, metadata),
        subscribe: (listener) => own(core.events.subscribe(listener)),
      },
      channels: core.channels,
      telemetry: {
        frames: () => core.telemetry.frames(),
        subscribe: (listener, options) => own(core.telemetry.subscribe(listener, options)),
      },
      listen: async (options) => {
        const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
        const setting = this.settingName(options.maxConnectionsKey) ?? `the ${options.name} listener of ${name}`;
        const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
        limitConnections(options.server, { maxConnections, setting, headersTimeoutMs }, logger);
        this.caps.push({ setting, maxConnections });
        const bound = await listen(options.server, options.host, options.port, this.settingName(options.portKey));
        this.servers.push(options.server);
        const listener = { name: options.name, ...bound, url: urlOf(options.scheme ?? 'http', bound.host, bound.port) };
        this.listeners.push(listener);
        return listener;
      },
      webSocketServer: (options) => {
        const server = new WebSocketServerWithKeepAlive(options);
        this.webSockets.push(server);
        return server;
      },
      adapter: async (family, ref) => {
        const instance = await core.adapters.open(family, ref, { configDir: core.configDir, logger: logger.child({ adapter: `${family}/${ref.name}` }) });
        this.adapters.push(instance);
        return instance;
      },
      addInvocationHooks: (hooks) => own(core.hooks.add(hooks)),
      traceInvocations: (tracer) => own(core.hooks.trace(tracer, name)),
      beginTrigger: (trigger, functionId, options) => core.hooks.beginTrigger(trigger, functionId, name, options),
      tapLogs: (listener) => own(core.logTap.add(listener)),
    };
  }

  /** `modules[0].config.port of flint-http (from ${FLINT_HTTP_PORT})`, for a listen error or a log line. */
  private settingName(configKey: string | undefined): string | undefined {
    if (configKey === undefined || this.configPath === undefined) return undefined;
    const key = `${this.configPath}.${configKey}`;
    const from = this.core.fromEnv[key];
    return `${key} of ${this.module.name}${from ? ` (from ${from})` : ''}`;
  }

  /** Stops the module's servers accepting connections and closes their idle ones. */
  stopAccepting(): void {
    for (const server of this.servers) {
      server.close();
      server.closeIdleConnections();
    }
  }

  /** Releases everything the module still holds; each step's failure is logged, never thrown. */
  async release(): Promise<void> {
    const log = (what: string) => (err: unknown) => this.ctx.logger.error(`releasing ${what} failed: ${errorMessage(err)}`);
    await Promise.all([...this.triggers.values()].map((unregister) => unregister().catch(log('a trigger'))));
    await Promise.all(this.webSockets.map((server) => server.closeAll(1001, 'engine shutting down').catch(log('a WebSocket server'))));
    for (const server of this.servers) server.closeAllConnections();
    for (const dispose of this.disposers.splice(0).reverse()) {
      try {
        dispose();
      } catch (err) {
        log('a registration')(err);
      }
    }
    await Promise.all(this.adapters.splice(0).map((adapter) => adapter.close().catch(log('an adapter'))));
    // The counts of the module's rate-limited lines (trigger failures, …) not yet written.
    flushBurstLogs(this.ctx.logger);
  }

  private registerTrigger(input: Parameters<ModuleContext['registerTrigger']>[0]): ModuleTrigger {
    const id = input.id ?? randomUUID();
    const triggers = this.core.triggers;
    const record = { id, type: input.type, function_id: input.function_id, config: input.config, metadata: input.metadata, owner: this.module.name };
    let removed: Promise<void> | undefined;
    const unregister = () => {
      if (!removed) {
        this.triggers.delete(id);
        removed = triggers.unregister(id);
      }
      return removed;
    };
    this.triggers.set(id, unregister);
    const ready = triggers.register(record).then((outcome) => {
      if (outcome.error) {
        this.triggers.delete(id);
        throw new FlintError(outcome.error.code, outcome.error.message);
      }
      return { parked: outcome.parked === true };
    });
    ready.catch(() => {}); // a module that does not await `ready` still sees the rejection logged by the registry
    return { id, ready, unregister };
  }
}

/** A local listing, its entries tagged with this engine's node id, followed by the other engines' (in a cluster). */
function withRemote<T extends { engine?: string }>(local: T[], remote: RemoteView | undefined, others: (r: RemoteView) => T[]): T[] {
  if (!remote) return local;
  return [...local.map((item) => ({ ...item, engine: remote.nodeId })), ...others(remote)];
}
