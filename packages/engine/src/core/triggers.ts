import { type ErrorBody, type TriggerInfo, type TriggerTypeInfo, formatError, isInternal, toErrorBody } from '@flint/protocol';
import type { ZodType } from 'zod';
import type { TriggerRecord, TriggerTypeDescription, TriggerTypeProvider } from './api/triggers.js';
import type { WorkerConnection } from './bridge/connection.js';
import type { RegistryEvents } from './events.js';
import type { Logger } from './logger.js';
import { checkTriggerConfig } from './trigger-config.js';

/** A trigger type as the registry holds it: a module's type has a config schema, a worker's has none. */
export interface TypeDefinition extends TriggerTypeDescription {
  configSchema?: ZodType;
}

interface TypeEntry {
  def: TypeDefinition;
  provider: TriggerTypeProvider;
  ownerConn: WorkerConnection | undefined;
  /** The module providing the type (undefined for a worker's). */
  module: string | undefined;
}

/** Who holds a trigger or a trigger type: a worker connection or a module. */
export type Holder = { conn: WorkerConnection; module?: undefined } | { conn?: undefined; module: string };

interface TriggerState {
  record: TriggerRecord;
  ownerConn: WorkerConnection | undefined;
  status: 'pending' | 'active' | 'parked';
  appliedTo: TypeEntry | undefined;
  /** The record as the provider got it (its config parsed by the type's schema). */
  applied?: TriggerRecord;
  /** Set once the trigger was taken back from its provider, so it is never taken back twice. */
  released?: boolean;
}

export interface RegistrationOutcome {
  error?: ErrorBody;
  parked?: boolean;
}

/**
 * The owner of the triggers a cluster mirrors from other engines (an `http` route registered there is
 * served here too). They are that engine's: listings show them through RemoteView, not as this engine's.
 */
export const CLUSTER_OWNER = 'flint-cluster';

/** Trigger ids remembered as already warned about being parked (the oldest are forgotten first). */
const MAX_PARKED_WARNINGS = 10_000;

/**
 * Triggers and trigger types. A trigger's config is checked against its type's schema (module types
 * have one), then applied by the provider of its type; a trigger whose type has no provider yet is
 * parked and applied as soon as one appears (and parked again if that provider leaves).
 */
export class TriggerRegistry {
  private readonly triggers = new Map<string, TriggerState>();
  private readonly types = new Map<string, TypeEntry>();
  /** Off until the modules have started (a module's route may come before flint-http is up). */
  private warnWhenParked = false;
  private readonly warnedParked = new Set<string>();

  /**
   * @param onLateOutcome told the outcome of triggers applied later than their registration (a parked
   *   trigger meeting its provider), so that the owner can still hear about a rejection.
   */
  constructor(
    private readonly logger: Logger,
    private readonly events: RegistryEvents,
    private readonly onLateOutcome: (trigger: TriggerRecord, ownerConn: WorkerConnection | undefined, outcome: RegistrationOutcome) => void = () => {},
  ) {}

  get size(): number {
    return this.triggers.size;
  }

  /**
   * Provides a trigger type: `owner` is the worker connection or the module name. A type already
   * provided is taken over; its previous provider is told to drop the triggers it had applied
   * (unless it is a connection on its way out), and a worker displaced by a module is told why.
   */
  registerType(def: TypeDefinition, provider: TriggerTypeProvider, owner: WorkerConnection | string): () => void {
    const ownerConn = typeof owner === 'string' ? undefined : owner;
    const previous = this.types.get(def.id);
    if (previous) this.displace(previous, typeof owner === 'string' ? owner : undefined);
    const entry: TypeEntry = { def, provider, ownerConn, module: typeof owner === 'string' ? owner : undefined };
    this.types.set(def.id, entry);
    ownerConn?.triggerTypes.add(def.id);
    this.events.emit(() => ({ type: 'trigger_type_added', trigger_type: def.id }));
    for (const state of this.triggers.values()) {
      if (state.record.type === def.id && state.status === 'parked') {
        void this.apply(state).then((outcome) => this.onLateOutcome(state.record, state.ownerConn, outcome));
      }
    }
    return () => {
      if (this.types.get(def.id) === entry) this.unregisterType(def.id, ownerConn);
    };
  }

  unregisterType(id: string, ownerConn?: WorkerConnection): void {
    const entry = this.types.get(id);
    if (!entry || entry.ownerConn !== ownerConn) return;
    ownerConn?.triggerTypes.delete(id);
    this.types.delete(id);
    this.detachType(entry);
    this.events.emit(() => ({ type: 'trigger_type_removed', trigger_type: id }));
  }

  /** Stores (or replaces) a trigger and applies it; resolves with what to tell the registering worker. */
  async register(record: TriggerRecord, ownerConn?: WorkerConnection): Promise<RegistrationOutcome> {
    const existing = this.triggers.get(record.id);
    const state: TriggerState = { record, ownerConn, status: 'parked', appliedTo: undefined };
    this.triggers.set(record.id, state);
    if (existing && existing.ownerConn !== ownerConn) existing.ownerConn?.triggers.delete(record.id);
    ownerConn?.triggers.add(record.id);
    this.emitTrigger(existing ? 'trigger_updated' : 'trigger_added', record);
    if (existing) await this.release(existing);
    if (this.triggers.get(record.id) !== state) return {};
    return this.apply(state);
  }

  async unregister(id: string): Promise<void> {
    const state = this.triggers.get(id);
    if (state) await this.remove(state);
  }

  /** Removes every trigger and trigger type a closing connection still owns. */
  async removeOwnedBy(conn: WorkerConnection): Promise<void> {
    for (const typeId of [...conn.triggerTypes]) this.unregisterType(typeId, conn);
    const removals: Promise<void>[] = [];
    for (const id of [...conn.triggers]) {
      const state = this.triggers.get(id);
      if (state && state.ownerConn === conn) removals.push(this.remove(state));
    }
    conn.triggers.clear();
    await Promise.all(removals);
  }

  list(includeInternal = false): TriggerInfo[] {
    const out: TriggerInfo[] = [];
    for (const { record, status } of this.triggers.values()) {
      if (record.owner === CLUSTER_OWNER || (!includeInternal && isInternal(record.function_id, record.metadata))) continue;
      const info: TriggerInfo = {
        id: record.id,
        trigger_type: record.type,
        function_id: record.function_id,
        config: record.config,
        status: status === 'active' ? 'active' : 'parked',
      };
      if (record.metadata) info.metadata = record.metadata;
      out.push(info);
    }
    return out;
  }

  listTypes(includeInternal = false): TriggerTypeInfo[] {
    const out: TriggerTypeInfo[] = [];
    for (const { def } of this.types.values()) {
      if (!includeInternal && def.id.startsWith('engine::')) continue;
      const { configSchema: _schema, ...info } = def;
      out.push(info);
    }
    return out;
  }

  hasType(id: string): boolean {
    return this.types.has(id);
  }

  /** The trigger types this engine's workers provide (what a cluster tells the other engines). */
  workerTypes(): TriggerTypeInfo[] {
    const out: TriggerTypeInfo[] = [];
    for (const { def, ownerConn } of this.types.values()) {
      if (!ownerConn) continue;
      const { configSchema: _schema, ...info } = def;
      out.push(info);
    }
    return out;
  }

  /** Who registered trigger `id`, if it exists. */
  holder(id: string): Holder | undefined {
    const state = this.triggers.get(id);
    if (!state) return undefined;
    return state.ownerConn ? { conn: state.ownerConn } : { module: state.record.owner };
  }

  /** Who provides trigger type `id`, if anyone does. */
  typeHolder(id: string): Holder | undefined {
    const entry = this.types.get(id);
    if (!entry) return undefined;
    return entry.ownerConn ? { conn: entry.ownerConn } : { module: entry.module ?? 'the engine' };
  }

  /**
   * From now on, a trigger parked because nobody provides its type is warned about (once per
   * trigger id); the triggers parked that way so far are warned about now. Called once the modules
   * have started, so that a route registered before its module's provider starts is not.
   */
  warnAboutParked(): void {
    this.warnWhenParked = true;
    for (const state of this.triggers.values()) {
      if (state.status === 'parked' && !this.types.has(state.record.type)) this.warnParked(state.record);
    }
  }

  private warnParked(record: TriggerRecord): void {
    if (!this.warnWhenParked || this.warnedParked.has(record.id)) return;
    if (this.warnedParked.size >= MAX_PARKED_WARNINGS) this.warnedParked.delete(this.warnedParked.values().next().value as string);
    this.warnedParked.add(record.id);
    const known = [...this.types.keys()].sort().join(', ') || 'none';
    this.logger.warn(
      { trigger_id: record.id, trigger_type: record.type, function_id: record.function_id },
      `trigger ${record.id} (type "${record.type}") is parked: no module or worker provides "${record.type}" (known: ${known})`,
    );
  }

  private async apply(state: TriggerState): Promise<RegistrationOutcome> {
    const type = this.types.get(state.record.type);
    if (!type) {
      state.status = 'parked';
      this.logger.debug({ trigger_id: state.record.id, trigger_type: state.record.type }, 'trigger parked until its type is provided');
      this.warnParked(state.record);
      return { parked: true };
    }
    let applied = state.record;
    if (type.def.configSchema) {
      const check = checkTriggerConfig(type.def.id, type.def.configSchema, state.record.config);
      if (!check.ok) return this.reject(state, { code: 'trigger_registration_failed', message: check.message });
      applied = { ...state.record, config: check.config };
    }
    state.status = 'pending';
    state.appliedTo = type;
    state.applied = applied;
    state.released = false;
    try {
      await type.provider.registerTrigger(applied);
    } catch (err) {
      if (this.triggers.get(state.record.id) === state && state.appliedTo !== type) {
        // The provider left while validating: the trigger waits for the next one.
        return { parked: true };
      }
      const error = toErrorBody(err, 'trigger_registration_failed');
      if (error.code === 'invocation_failed') error.code = 'trigger_registration_failed';
      return this.reject(state, error);
    }
    if (this.triggers.get(state.record.id) !== state || state.appliedTo !== type) {
      // Removed, replaced or detached while the provider was validating it: undo (unless release did).
      if (!state.released && this.types.get(type.def.id) === type) await this.callUnregister(type, applied);
      return {};
    }
    state.status = 'active';
    this.emitTrigger('trigger_updated', state.record);
    return {};
  }

  /** A refused trigger is not kept; its owner is told why (and the log says so). */
  private reject(state: TriggerState, error: ErrorBody): RegistrationOutcome {
    if (this.triggers.get(state.record.id) === state) this.forget(state);
    this.logger.warn(
      { trigger_id: state.record.id, trigger_type: state.record.type, function_id: state.record.function_id },
      `trigger rejected: ${error.message}`,
    );
    return { error: { code: error.code, message: error.message } };
  }

  private async remove(state: TriggerState): Promise<void> {
    this.forget(state);
    await this.release(state);
  }

  /** Takes a trigger out of the provider it was applied to. */
  private async release(state: TriggerState): Promise<void> {
    const type = state.appliedTo;
    // A trigger the provider is still validating is taken back too, so that the provider sees
    // register → unregister in order (and a later re-registration of the same id stays applied).
    const applied = state.status === 'active' || state.status === 'pending';
    state.appliedTo = undefined;
    state.status = 'parked';
    if (applied && type && this.types.get(type.def.id) === type) {
      state.released = true;
      await this.callUnregister(type, state.applied ?? state.record);
    }
  }

  private forget(state: TriggerState): void {
    if (this.triggers.get(state.record.id) === state) {
      this.triggers.delete(state.record.id);
      this.emitTrigger('trigger_removed', state.record);
    }
    if (state.ownerConn && !this.ownsAnother(state)) state.ownerConn.triggers.delete(state.record.id);
  }

  private emitTrigger(type: 'trigger_added' | 'trigger_updated' | 'trigger_removed', record: TriggerRecord): void {
    this.events.emit(() => ({ type, trigger_id: record.id, trigger_type: record.type, function_id: record.function_id }));
  }

  private ownsAnother(state: TriggerState): boolean {
    const current = this.triggers.get(state.record.id);
    return current !== undefined && current.ownerConn === state.ownerConn;
  }

  /**
   * A type's provider is replaced: the triggers it had applied are taken back from it (no ghost routes
   * or subscriptions left behind there) and wait for the new provider.
   */
  private displace(previous: TypeEntry, byModule: string | undefined): void {
    const conn = previous.ownerConn;
    const reachable = conn === undefined || conn.live;
    const applied: TriggerRecord[] = [];
    for (const state of this.triggers.values()) {
      if (state.appliedTo === previous && (state.status === 'active' || state.status === 'pending')) applied.push(state.applied ?? state.record);
    }
    this.detachType(previous);
    if (conn) conn.triggerTypes.delete(previous.def.id);
    if (!reachable) return;
    for (const record of applied) void this.callUnregister(previous, record);
    if (conn && byModule !== undefined) {
      const owner = `provided by module ${byModule}`;
      this.logger.warn(
        { worker_id: conn.id, trigger_type: previous.def.id, module: byModule },
        `module ${byModule} took trigger type ${previous.def.id} over from worker ${conn.id}`,
      );
      conn.send({
        type: 'error',
        error: { code: 'trigger_type_reserved', message: formatError('trigger_type_reserved', { trigger_type: previous.def.id, owner }) },
      });
    }
  }

  private detachType(entry: TypeEntry): void {
    for (const state of this.triggers.values()) {
      if (state.appliedTo === entry) {
        const wasActive = state.status === 'active';
        state.appliedTo = undefined;
        state.status = 'parked';
        if (wasActive) this.emitTrigger('trigger_updated', state.record);
      }
    }
  }

  private async callUnregister(type: TypeEntry, record: TriggerRecord): Promise<void> {
    try {
      await type.provider.unregisterTrigger(record);
    } catch (err) {
      this.logger.warn({ trigger_id: record.id, trigger_type: record.type }, `unregistering trigger failed: ${toErrorBody(err).message}`);
    }
  }
}
