import type { ErrorBody, InvokeAction } from './messages.js';

/** Text JSON.stringify writes as is between quotes: no control character, quote, backslash or surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes
const PLAIN_TEXT = /^[^\x00-\x1f"\\\ud800-\udfff]*$/;

/**
 * JSON.stringify(text), for the short strings spliced into every frame (ids, trace context, HTTP methods
 * and paths): most need no escaping, and quoting them directly skips JSON.stringify's set-up, which costs
 * more than the string itself. Any other text goes through JSON.stringify.
 */
export function jsonString(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** What an `invocationresult` frame carries besides its ids. */
export interface ResultParts {
  /** Left out when undefined (the engine also leaves out null: see its bridge). */
  result?: unknown;
  /** An ErrorBody, or what an SDK reply has of one. */
  error?: Partial<ErrorBody>;
  traceparent?: string;
  baggage?: string;
}

/**
 * The text of an `invocationresult` frame, written out by hand: only the result and the error go through
 * JSON.stringify, so the fixed keys are not escaped again for every answer (the engine and the SDK write
 * one per call). The same text as JSON.stringify of the frame object, but for a result with a toJSON
 * method that looks at its key (it is given "" here). Throws what JSON.stringify throws for a result it
 * cannot serialise.
 */
export function resultFrame(invocationId: string, functionId: string, parts: ResultParts): string {
  let frame = `{"type":"invocationresult","invocation_id":${jsonString(invocationId)},"function_id":${jsonString(functionId)}`;
  if (parts.result !== undefined) {
    const json = JSON.stringify(parts.result) as string | undefined;
    if (json !== undefined) frame += `,"result":${json}`;
  }
  if (parts.error !== undefined) frame += `,"error":${JSON.stringify(parts.error)}`;
  if (parts.traceparent !== undefined) frame += `,"traceparent":${jsonString(parts.traceparent)}`;
  if (parts.baggage !== undefined) frame += `,"baggage":${jsonString(parts.baggage)}`;
  return `${frame}}`;
}

/** What an `invokefunction` frame carries besides its ids. */
export interface InvokeParts {
  /** The payload, already written as JSON (left out when undefined). */
  dataJson?: string;
  traceparent?: string;
  baggage?: string;
  timeoutMs?: number;
  action?: InvokeAction;
  /** The caller's identity (engine → worker), already written as JSON. */
  callerJson?: string;
}

/**
 * The text of an `invokefunction` frame, written out by hand like resultFrame's. `invocationId` is one
 * the writer made itself (crypto.randomUUID, or the engine's UUID-shaped sequence: hex digits and dashes),
 * so it goes in as is; undefined leaves it out (a call nobody waits for).
 */
export function invokeFrame(invocationId: string | undefined, functionId: string, parts: InvokeParts): string {
  let frame = invocationId === undefined ? '{"type":"invokefunction"' : `{"type":"invokefunction","invocation_id":"${invocationId}"`;
  frame += `,"function_id":${jsonString(functionId)}`;
  if (parts.dataJson !== undefined) frame += `,"data":${parts.dataJson}`;
  if (parts.traceparent !== undefined) frame += `,"traceparent":${jsonString(parts.traceparent)}`;
  if (parts.baggage !== undefined) frame += `,"baggage":${jsonString(parts.baggage)}`;
  if (parts.timeoutMs !== undefined) frame += `,"timeout_ms":${JSON.stringify(parts.timeoutMs)}`;
  if (parts.action !== undefined) frame += `,"action":${JSON.stringify(parts.action)}`;
  if (parts.callerJson !== undefined) frame += `,"caller":${parts.callerJson}`;
  return `${frame}}`;
}
