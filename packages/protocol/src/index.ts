export * from './builtins.js';
export * from './channels.js';
export { type DecodeResult, MAX_FUNCTION_ID_LENGTH, checkFunctionId, decodeWorkerFrame, isUuid } from './decode.js';
export * from './errors.js';
export * from './messages.js';
