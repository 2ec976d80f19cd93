export { openAdapter } from './adapters/index.js';
export { openKvStore } from './adapters/kv/index.js';
export {
  type KvAdapterConfig,
  type KvEntry,
  type KvStore,
  type KvUpdateResult,
  type KvUpdater,
  type KvWriteResult,
  kvAdapterSchema,
} from './adapters/kv/types.js';
export { ConfigError, type ConfigProblem, DEFAULT_CONFIG_FILE } from './config/load.js';
export type { EngineConfig, ResolvedModule } from './config/schema.js';
export { type Logger, type LoggerOptions, createLogger } from './core/logger.js';
export type * from './core/module-api.js';
export { type Engine, type EngineOptions, type EngineStats, createEngine, startEngine } from './engine.js';
