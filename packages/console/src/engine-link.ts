import { randomUUID } from 'node:crypto';
import { EngineTriggers, FlintError, type Worker, registerWorker } from '@flint/sdk';
import type { BridgeState, LiveEvent } from './api-types.js';
import { ApiFailure } from './http/failure.js';
import type { ConsoleOptions } from './options.js';

/** How long an API call waits for the engine by default. */
export const ENGINE_CALL_TIMEOUT_MS = 10_000;

/**
 * The console's connection to the engine: a worker on the bridge that does not announce itself (it is
 * not one of the user's workers). Through it the console calls the engine's functions, and it listens to
 * registry and state changes with internal triggers (`metadata.internal`, hidden from listings) so that
 * pages are updated when something changes instead of polling.
 */
export class EngineLink {
  readonly worker: Worker;
  private readonly listeners = new Set<(event: LiveEvent) => void>();
  private state: BridgeState = 'connecting';

  constructor(options: ConsoleOptions, log: Pick<Console, 'warn' | 'error' | 'debug'>) {
    this.worker = registerWorker(options.bridgeUrl, {
      workerName: 'flint-console',
      announce: false,
      token: options.bridgeToken,
      spans: options.otel,
      serviceName: options.otelServiceName,
      log,
    });
    this.worker.on('connected', () => this.setState('connected'));
    this.worker.on('disconnected', () => this.setState('disconnected'));
    this.worker.on('failed', () => this.setState('disconnected'));

    // One function per console process (several consoles may watch one engine), for every change trigger.
    const functionId = `flint-console.${randomUUID().slice(0, 8)}::changed`;
    this.worker.registerFunction(functionId, (input: unknown) => this.changed(input), {
      description: "The console's change listener: registry and state changes pushed to open pages",
      metadata: { internal: true },
    });
    const metadata = { internal: true };
    for (const type of [EngineTriggers.FUNCTIONS_AVAILABLE, EngineTriggers.WORKERS_AVAILABLE, EngineTriggers.TRIGGERS_AVAILABLE]) {
      this.worker.registerTrigger({ type, function_id: functionId, config: {}, metadata });
    }
    // Every scope (parked until flint-state is loaded).
    this.worker.registerTrigger({ type: 'state', function_id: functionId, config: {}, metadata });
  }

  get bridgeState(): BridgeState {
    return this.state;
  }

  /** Calls every listener with each change (until the returned function is called). */
  onEvent(listener: (event: LiveEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls an engine function; `engine_unavailable` (503) at once while the bridge is down. */
  async call<T = unknown>(functionId: string, payload: unknown, timeoutMs = ENGINE_CALL_TIMEOUT_MS): Promise<T> {
    if (!this.worker.connected) throw new ApiFailure(503, 'engine_unavailable', `the engine bridge at ${this.worker.shownUrl} is not connected`);
    return (await this.worker.trigger({ function_id: functionId, payload, timeoutMs })) as T;
  }

  /** Like `call`, but a missing function (its module is not loaded) resolves with `undefined`. */
  async callOptional<T = unknown>(functionId: string, payload: unknown): Promise<T | undefined> {
    try {
      return await this.call<T>(functionId, payload);
    } catch (err) {
      if (err instanceof FlintError && err.code === 'function_not_found') return undefined;
      throw err;
    }
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.worker.shutdown();
  }

  private setState(state: BridgeState): void {
    if (state === this.state) return;
    this.state = state;
    this.emit({ type: 'bridge', state });
  }

  private changed(input: unknown): null {
    const data = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
    if (data.type === 'state') {
      this.emit({ type: 'state', event_type: String(data.event_type), scope: String(data.scope), key: String(data.key) });
    } else if (data.event === 'functions_changed') this.emit({ type: 'functions' });
    else if (data.event === 'triggers_changed') this.emit({ type: 'triggers' });
    else if (typeof data.event === 'string' && data.event.startsWith('worker_')) this.emit({ type: 'workers' });
    return null;
  }

  private emit(event: LiveEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
