import { z } from 'zod';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { registerAvailabilityTriggers } from './availability.js';
import { registerListings } from './listings.js';
import { registerLogFunctions } from './logs.js';

/** Delay that coalesces a burst of registrations into one `engine::functions-available` firing. */
const FUNCTIONS_DEBOUNCE_MS = 20;

/**
 * `flint-engine`: the engine's own functions (`engine::functions::list`, `engine::workers::register`,
 * `engine::channels::create`, `engine::log::*`, …) and trigger types (`engine::functions-available`,
 * `engine::workers-available`). Always loaded, first, and not listed in `flint-config.yaml`.
 */
class EngineFunctionsModule implements EngineModule {
  readonly name = 'flint-engine';
  private availability: { stop(): void } | undefined;

  start(ctx: ModuleContext): void {
    registerListings(ctx);
    registerLogFunctions(ctx);
    this.availability = registerAvailabilityTriggers(ctx, FUNCTIONS_DEBOUNCE_MS);
  }

  stop(): void {
    this.availability?.stop();
  }
}

export const engineModule: ModuleDefinition<Record<string, never>> = {
  name: 'flint-engine',
  configSchema: z.strictObject({}),
  create: () => new EngineFunctionsModule(),
};
