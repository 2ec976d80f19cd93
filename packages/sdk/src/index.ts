export {
  type ChannelRef,
  EngineFunctions,
  EngineTriggers,
  type ErrorBody,
  FlintError,
  type FunctionInfo,
  type FunctionProviderInfo,
  type TriggerInfo,
  type WorkerInfo,
} from '@flint/protocol';
export { DEFAULT_RECONNECT, type ReconnectOptions, reconnectDelay } from './backoff.js';
export { ChannelReader } from './channel-reader.js';
export { ChannelWriter } from './channel-writer.js';
export type { ConnectionProblem } from './connection-problem.js';
export type { CronEvent, CronTriggerConfig } from './cron.js';
export { FORBIDDEN, FlintForbiddenError, FlintInvocationError, TriggerRegistrationError } from './errors.js';
export { type ApiResponse, type HttpRequest, type HttpResponse, type SseEvent, formatSse, http } from './http.js';
export { Logger } from './logger.js';
export type { HandlerWithTrigger } from './module-client.js';
export {
  type DeadLetterInfo,
  type DurableSubscriberConfig,
  QueueClient,
  type SubscribeOptions,
  type SubscriberQueueConfig,
} from './queue.js';
export {
  type OnChangeOptions,
  type StateChange,
  StateClient,
  type StateEvent,
  type StateEventType,
  type StateUpdateOp,
  type StateUpdateResult,
} from './state.js';
export {
  type OnStreamChangeOptions,
  type OnStreamJoinLeaveOptions,
  StreamClient,
  type StreamInfo,
  type StreamJoinResult,
} from './stream.js';
export type {
  StreamJoinLeaveEvent,
  StreamJoinLeaveTriggerConfig,
  StreamMessage,
  StreamMessageEvent,
  StreamTriggerConfig,
} from './stream-types.js';
export {
  type Channel,
  type FunctionOptions,
  type FunctionRef,
  type Handler,
  type HandlerContext,
  type HttpAuth,
  type HttpInvocation,
  type ModuleTriggerConfigs,
  TriggerAction,
  type TriggerConfig,
  type TriggerInput,
  type TriggerRef,
  type TriggerRequest,
  type TriggerTypeHandler,
  type WorkerOptions,
} from './types.js';
export { DEFAULT_CONNECT_TIMEOUT_MS, SDK_VERSION, Worker, currentInvocation, registerWorker } from './worker.js';
