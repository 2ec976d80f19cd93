import type { ModuleDefinition } from '../core/module-api.js';

/** Modules the engine knows by name; each later module (http, queue, cron, state, stream, observability) adds itself here. */
export const BUILTIN_MODULES: readonly ModuleDefinition[] = [];
