import { errorMessage } from '../lib/errors.js';
import type { RegistryEvent } from './api/registry.js';
import type { Logger } from './logger.js';

/**
 * The registry's change events, for modules (the engine module's `engine::*-available` triggers, a
 * console, observability). Emitting checks one length first, so a registry change with no listener
 * builds no event object.
 */
export class RegistryEvents {
  private listeners: ((event: RegistryEvent) => void)[] = [];

  constructor(private readonly logger: Logger) {}

  get listening(): boolean {
    return this.listeners.length > 0;
  }

  subscribe(listener: (event: RegistryEvent) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Delivers an event (built by `make` only when someone listens). */
  emit(make: () => RegistryEvent): void {
    if (this.listeners.length === 0) return;
    const event = make();
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.error({ event: event.type }, `a registry listener threw (ignored): ${errorMessage(err)}`);
      }
    }
  }
}
