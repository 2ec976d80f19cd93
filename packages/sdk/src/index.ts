export {
  registerWorker,
  Worker,
  TriggerAction,
  currentInvocation,
  SDK_VERSION,
  type WorkerOptions,
  type Handler,
  type HandlerContext,
  type FunctionOptions,
  type FunctionRef,
  type TriggerInput,
  type TriggerRef,
  type TriggerConfig,
  type TriggerTypeHandler,
  type TriggerRequest,
  type Channel,
} from './worker.js';
export { ChannelReader, ChannelWriter } from './channels.js';
export { FlintInvocationError, TriggerRegistrationError } from './errors.js';
export { Logger } from './logger.js';
export { http, formatSse, type HttpRequest, type HttpResponse, type ApiResponse, type SseEvent } from './http.js';
export { reconnectDelay, DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.js';
export { FlintError, EngineFunctions, EngineTriggers, type ErrorBody, type ChannelRef, type FunctionInfo, type TriggerInfo, type WorkerInfo } from '@flint/protocol';
