import type { ModuleDefinition } from '../core/module-api.js';
import { cronModule } from './cron/index.js';
import { type EngineAbout, engineFunctionsModule } from './engine/index.js';
import { httpModule } from './http/index.js';
import { httpFunctionsModule } from './http-functions/index.js';
import { observabilityModule } from './observability/index.js';
import { pubsubModule } from './pubsub/index.js';
import { queueModule } from './queue/index.js';
import { stateModule } from './state/index.js';
import { streamModule } from './stream/index.js';

/** Modules the engine knows by name (the embedded defaults load all of them). */
export const BUILTIN_MODULES: readonly ModuleDefinition[] = [
  httpModule as ModuleDefinition,
  stateModule as ModuleDefinition,
  streamModule as ModuleDefinition,
  queueModule as ModuleDefinition,
  pubsubModule as ModuleDefinition,
  cronModule as ModuleDefinition,
  observabilityModule as ModuleDefinition,
  httpFunctionsModule as ModuleDefinition,
];

/** The engine's own functions and trigger types: always loaded, first, never listed in the config. */
export { type EngineAbout, engineFunctionsModule };
