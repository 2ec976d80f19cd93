export * from './builtins.js';
export * from './channels.js';
export { type DecodeResult, MAX_FUNCTION_ID_LENGTH, checkFunctionId, decodeWorkerFrame, functionIdError, isUuid } from './decode.js';
export { type EngineDecodeResult, decodeEngineFrame } from './decode-engine.js';
export * from './errors.js';
export * from './failures.js';
export { type Corkable, FLUSH_EVERY, FrameBatcher } from './frame-batcher.js';
export * from './messages.js';
export type * from './stream.js';
