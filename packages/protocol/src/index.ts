export * from './messages.js';
export * from './errors.js';
export { decodeWorkerFrame, checkFunctionId, isUuid, MAX_FUNCTION_ID_LENGTH, type DecodeResult } from './decode.js';
export * from './channels.js';
export * from './builtins.js';
