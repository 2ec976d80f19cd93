import { FlintError, type FunctionInfo, type FunctionProviderInfo, formatError, isInternal } from '@flint/protocol';
import type { FunctionDefinition, FunctionDelegate, InternalHandler } from './api/functions.js';
import type { WorkerConnection } from './bridge/connection.js';
import type { RegistryEvents } from './events.js';
import type { Logger } from './logger.js';
import type { PayloadCheck, PayloadValidation } from './payload-validation.js';

export type FunctionProvider =
  | { kind: 'worker'; conn: WorkerConnection; inFlight: number }
  | { kind: 'internal'; owner: string; handler: InternalHandler; inFlight: number; replaceable: boolean }
  /** A worker's function run by the engine (an HTTP endpoint): it goes with the worker's connection. */
  | { kind: 'delegated'; conn: WorkerConnection; handler: InternalHandler; inFlight: number }
  /** Workers connected to another engine of the cluster provide it; `handler` forwards the call there. */
  | { kind: 'remote'; node: string; workers: RemoteWorkerRef[]; handler: InternalHandler; inFlight: number };

/** A worker of another engine that provides a function (for listings). */
export interface RemoteWorkerRef {
  worker_id: string;
  worker_name: string | null;
}

export interface FunctionEntry extends FunctionDefinition {
  providers: FunctionProvider[];
  /** The compiled `request_format` when this worker function's payloads are validated. */
  check: PayloadCheck | undefined;
  /** Rotating start for tie-breaking among equally loaded providers. */
  next: number;
  /** A module's alias, listed only with `include_internal`. */
  unlisted?: boolean;
}

/**
 * Functions and their providers. A function stays listed while at least one provider is live;
 * ownership is per connection, so an old connection's cleanup never removes what a newer connection
 * registered. Several providers of one id are balanced (least in flight first).
 */
export class FunctionRegistry {
  readonly functions = new Map<string, FunctionEntry>();
  private delegateOwner: { module: string; make: FunctionDelegate } | undefined;

  constructor(
    private readonly events: RegistryEvents,
    private readonly validation?: PayloadValidation,
    private readonly logger?: Logger,
  ) {}

  get size(): number {
    return this.functions.size;
  }

  has(id: string): boolean {
    return this.functions.has(id);
  }

  registerWorkerFunction(conn: WorkerConnection, def: FunctionDefinition): void {
    const entry = this.upsert(def);
    entry.check = this.validation?.compile(def);
    if (!entry.providers.some((p) => p.kind === 'worker' && p.conn === conn)) {
      entry.providers.push({ kind: 'worker', conn, inFlight: 0 });
    }
    conn.functions.add(def.id);
  }

  unregisterWorkerFunction(conn: WorkerConnection, id: string): void {
    conn.functions.delete(id);
    this.removeProvider(id, (p) => (p.kind === 'worker' || p.kind === 'delegated') && p.conn === conn);
  }

  /**
   * Sets what engine `node` of the cluster provides: its functions (with their discovery metadata and
   * the workers providing each), replacing what it provided before; `handler` forwards a call there.
   * A function only another engine provides is listed and called like a local one; where this engine
   * has a provider of its own, that one is used first.
   */
  setRemoteFunctions(node: string, defs: (FunctionDefinition & { workers: RemoteWorkerRef[] })[], handler: InternalHandler): void {
    const keep = new Set(defs.map((d) => d.id));
    for (const entry of [...this.functions.values()]) {
      if (!keep.has(entry.id)) this.removeProvider(entry.id, (p) => p.kind === 'remote' && p.node === node);
    }
    for (const def of defs) {
      const existing = this.functions.get(def.id);
      // A module's function is this engine's own: another engine's worker never provides it here.
      if (existing?.providers.some((p) => p.kind === 'internal')) continue;
      // Another engine's copy of the discovery metadata never overwrites this engine's own.
      const entry = existing?.providers.some((p) => p.kind !== 'remote') ? existing : this.upsert(def);
      const own = entry.providers.find((p) => p.kind === 'remote' && p.node === node);
      if (own?.kind === 'remote') {
        own.workers = def.workers;
        own.handler = handler;
      } else entry.providers.push({ kind: 'remote', node, workers: def.workers, handler, inFlight: 0 });
    }
  }

  /** Forgets everything engine `node` of the cluster provided (it left, or its heartbeats stopped). */
  dropRemote(node: string): void {
    for (const entry of [...this.functions.values()]) this.removeProvider(entry.id, (p) => p.kind === 'remote' && p.node === node);
  }

  /** The functions this engine's own workers provide (what it tells the other engines of a cluster). */
  localWorkerFunctions(): (FunctionDefinition & { workers: RemoteWorkerRef[] })[] {
    const out: (FunctionDefinition & { workers: RemoteWorkerRef[] })[] = [];
    for (const entry of this.functions.values()) {
      const workers: RemoteWorkerRef[] = [];
      for (const p of entry.providers) {
        if (p.kind === 'internal') {
          workers.length = 0;
          break;
        }
        if (p.kind === 'worker' || p.kind === 'delegated') workers.push({ worker_id: p.conn.id, worker_name: p.conn.metadata?.name ?? null });
      }
      if (workers.length === 0) continue;
      const { id, description, request_format, response_format, metadata } = entry;
      out.push({ id, description, request_format, response_format, metadata, workers });
    }
    return out;
  }

  /** The module that runs workers' delegated functions (`registerfunction` with `invocation`), if one does. */
  get delegate(): { module: string; make: FunctionDelegate } | undefined {
    return this.delegateOwner;
  }

  /** Takes the role of running delegated functions; a second module claiming it is an error. */
  claimDelegate(module: string, make: FunctionDelegate): () => void {
    if (this.delegateOwner)
      throw new FlintError('internal_error', `module ${module} cannot run HTTP-invoked functions: module ${this.delegateOwner.module} already does`);
    const owner = { module, make };
    this.delegateOwner = owner;
    return () => {
      if (this.delegateOwner === owner) this.delegateOwner = undefined;
    };
  }

  /** Registers a worker's function that the engine runs with `handler` (made by the delegate). */
  registerDelegatedFunction(conn: WorkerConnection, def: FunctionDefinition, handler: InternalHandler): void {
    const entry = this.upsert(def);
    entry.check = this.validation?.compile(def);
    const own = entry.providers.findIndex((p) => (p.kind === 'worker' || p.kind === 'delegated') && p.conn === conn);
    if (own >= 0) entry.providers.splice(own, 1);
    entry.providers.push({ kind: 'delegated', conn, handler, inFlight: 0 });
    conn.functions.add(def.id);
  }

  /** The module providing function `id`, if a module does. */
  moduleOf(id: string): string | undefined {
    const internal = this.functions.get(id)?.providers.find((p) => p.kind === 'internal');
    return internal?.kind === 'internal' ? internal.owner : undefined;
  }

  /**
   * Registers a module's (or the engine's) handler. A function is provided by one module: a second
   * module registering the same id fails, unless the first registration was `replaceable`, in which
   * case it is withdrawn. Workers that registered the id first (while the module was starting) stop
   * providing it and are told why.
   */
  registerInternalFunction(owner: string, def: FunctionDefinition, handler: InternalHandler, replaceable = false, unlisted = false): () => void {
    const taken = this.functions.get(def.id)?.providers.find((p) => p.kind === 'internal' && p.owner !== owner);
    if (taken?.kind === 'internal') {
      if (!taken.replaceable)
        throw new FlintError('internal_error', `function ${def.id} is already provided by module ${taken.owner} (registered by ${owner})`);
      this.removeProvider(def.id, (p) => p === taken);
    }
    const entry = this.upsert(def);
    entry.unlisted = unlisted || undefined;
    const provider: FunctionProvider = { kind: 'internal', owner, handler, inFlight: 0, replaceable };
    entry.providers.push(provider);
    this.displaceWorkers(def.id, owner);
    return () => this.removeProvider(def.id, (p) => p === provider);
  }

  /**
   * Picks the provider with the fewest calls in flight (rotating among ties). This engine's own
   * providers come first: another engine's (`remote`) is picked only when there is none here, and
   * never with `localOnly` (a call another engine forwarded here).
   */
  pickProvider(entry: FunctionEntry, localOnly = false): FunctionProvider | undefined {
    const providers = entry.providers;
    const n = providers.length;
    if (n === 1) {
      const only = providers[0] as FunctionProvider;
      return only.kind === 'remote' && localOnly ? undefined : only;
    }
    if (n === 0) return undefined;
    const start = entry.next++ % n;
    let best: FunctionProvider | undefined;
    let bestRemote = true;
    for (let i = 0; i < n; i++) {
      const p = providers[(start + i) % n] as FunctionProvider;
      const remote = p.kind === 'remote';
      if (remote && localOnly) continue;
      if (best === undefined || (bestRemote && !remote) || (remote === bestRemote && p.inFlight < best.inFlight)) {
        best = p;
        bestRemote = remote;
      }
    }
    return best;
  }

  list(includeInternal = false): FunctionInfo[] {
    const out: FunctionInfo[] = [];
    for (const entry of this.functions.values()) {
      if (!includeInternal && (entry.unlisted || isInternal(entry.id, entry.metadata))) continue;
      out.push({
        function_id: entry.id,
        description: entry.description ?? null,
        request_format: entry.request_format ?? null,
        response_format: entry.response_format ?? null,
        metadata: entry.metadata ?? null,
        providers: entry.providers.flatMap(providerInfo),
      });
    }
    return out;
  }

  private displaceWorkers(id: string, module: string): void {
    for (const p of [...(this.functions.get(id)?.providers ?? [])]) {
      if (p.kind === 'internal') continue;
      if (p.kind === 'remote') {
        this.removeProvider(id, (q) => q === p);
        continue;
      }
      this.unregisterWorkerFunction(p.conn, id);
      this.logger?.warn({ worker_id: p.conn.id, function_id: id, module }, `module ${module} took function ${id} over from worker ${p.conn.id}`);
      const message = formatError('function_id_reserved', { function_id: id, owner: `provided by module ${module}` });
      p.conn.send({ type: 'error', error: { code: 'function_id_reserved', message } });
    }
  }

  private upsert(def: FunctionDefinition): FunctionEntry {
    const existing = this.functions.get(def.id);
    if (existing) {
      // A re-registration overwrites the discovery metadata (workers replay on every reconnect).
      existing.description = def.description;
      existing.request_format = def.request_format;
      existing.response_format = def.response_format;
      existing.metadata = def.metadata;
      return existing;
    }
    const entry: FunctionEntry = {
      id: def.id,
      description: def.description,
      request_format: def.request_format,
      response_format: def.response_format,
      metadata: def.metadata,
      providers: [],
      check: undefined,
      next: 0,
    };
    this.functions.set(def.id, entry);
    this.events.emit(() => ({ type: 'function_added', function_id: def.id }));
    return entry;
  }

  private removeProvider(id: string, match: (p: FunctionProvider) => boolean): void {
    const entry = this.functions.get(id);
    if (!entry) return;
    const index = entry.providers.findIndex(match);
    if (index < 0) return;
    entry.providers.splice(index, 1);
    if (entry.providers.length === 0) {
      this.functions.delete(id);
      this.events.emit(() => ({ type: 'function_removed', function_id: id }));
    }
  }
}

function providerInfo(p: FunctionProvider): FunctionProviderInfo[] {
  if (p.kind === 'internal') return [{ module: p.owner }];
  if (p.kind === 'remote') return p.workers.map((w) => ({ ...w, engine: p.node }));
  return [{ worker_id: p.conn.id, worker_name: p.conn.metadata?.name ?? null }];
}
