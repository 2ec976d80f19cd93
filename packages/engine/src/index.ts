export type { KvEntry, KvStore, KvUpdateResult, KvUpdater, KvWriteResult } from './adapters/kv/types.js';
export type { LockBackend } from './adapters/lock/types.js';
export type {
  BindOptions,
  ConsumeOptions,
  Consumer,
  DeadLetter,
  Delivery,
  DeliveryHandler,
  NewMessage,
  QueueBackend,
  QueueStats,
  Settlement,
  WaitingMessage,
} from './adapters/queue/types.js';
export type { StreamFrame, StreamGroups, StreamStore } from './adapters/stream/types.js';
export { ConfigError, type ConfigProblem, DEFAULT_CONFIG_FILE } from './config/load.js';
export type { EngineConfig, ResolvedModule } from './config/schema.js';
export type { Holdup } from './core/lifecycle.js';
export { type Logger, type LoggerOptions, createLogger } from './core/logger.js';
export type * from './core/module-api.js';
export { type Engine, type EngineOptions, type EngineStats, type ShutdownReport, createEngine, startEngine } from './engine.js';
export { adapterRef } from './lib/adapter-ref.js';
export type { CronListing } from './modules/cron/jobs.js';
export { openAdapter } from './open-adapter.js';
