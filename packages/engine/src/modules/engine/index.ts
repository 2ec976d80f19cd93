import type { EngineModule, ModuleContext } from '../../core/module-api.js';
import { registerAvailabilityTriggers } from './availability.js';
import { registerListings } from './listings.js';
import { registerLogFunctions } from './logs.js';

/** What `engine::config::get` reports: the composition root knows it, the module only serves it. */
export interface EngineAbout {
  version: string;
  started_at: number;
  listeners: { name: string; url: string }[];
  /** Loaded modules with their config, secrets already redacted. */
  modules: { name: string; config: unknown }[];
}

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

  constructor(private readonly about: () => EngineAbout) {}

  start(ctx: ModuleContext): void {
    registerListings(ctx);
    ctx.registerFunction(
      {
        id: 'engine::config::get',
        description: "The engine's version, start time, listeners and loaded modules with their config (secrets shown as ***)",
        request_format: { type: 'object' },
      },
      () => this.about(),
    );
    registerLogFunctions(ctx);
    this.availability = registerAvailabilityTriggers(ctx, FUNCTIONS_DEBOUNCE_MS);
  }

  stop(): void {
    this.availability?.stop();
  }
}

/** The engine's own module; `about` answers `engine::config::get`. */
export function engineFunctionsModule(about: () => EngineAbout): EngineModule {
  return new EngineFunctionsModule(about);
}
