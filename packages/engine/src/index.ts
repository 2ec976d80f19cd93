export { createEngine, startEngine, type Engine, type EngineOptions, type EngineStats } from './engine.js';
export { ConfigError, type ConfigProblem, DEFAULT_CONFIG_FILE } from './config/load.js';
export type { EngineConfig, ResolvedModule } from './config/schema.js';
export { createLogger, type Logger, type LoggerOptions } from './core/logger.js';
export type * from './core/module-api.js';
