import { type ErrorCode, formatError } from './errors.js';
import { checkAction, isObject, optObject, optString } from './frame-checks.js';
import type { InvokeAction, WorkerToEngine } from './messages.js';

type DecodeFailure = {
  ok: false;
  /** `invalid_function_id` for a function id that breaks the rule of checkFunctionId, else `invalid_frame`. */
  code: Extract<ErrorCode, 'invalid_frame' | 'invalid_function_id'>;
  reason: string;
  invocationId?: string;
  functionId?: string;
};

export type DecodeResult = { ok: true; message: WorkerToEngine } | DecodeFailure;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const BAD_ID_CHARS = /[\s\u0000-\u001f\u007f]/;

export const MAX_FUNCTION_ID_LENGTH = 256;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && value.length === 36 && UUID_RE.test(value);
}

/** Returns a reason when `id` is not a valid function id, else undefined. */
export function checkFunctionId(id: unknown): string | undefined {
  if (typeof id !== 'string') return 'must be a string';
  if (id.length === 0) return 'must not be empty';
  if (id.length > MAX_FUNCTION_ID_LENGTH) return `must be at most ${MAX_FUNCTION_ID_LENGTH} characters`;
  if (BAD_ID_CHARS.test(id)) return 'must not contain whitespace or control characters';
  return undefined;
}

/**
 * The `invalid_function_id` message for an id that breaks the rule of checkFunctionId (naming the id
 * and the rule), else undefined. The engine answers frames with it; clients check ids with it first.
 */
export function functionIdError(id: string): string | undefined {
  const rule = checkFunctionId(id);
  if (rule === undefined) return undefined;
  const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
  return formatError('invalid_function_id', { function_id: JSON.stringify(shown), rule });
}

function fail(reason: string, frame?: Record<string, unknown>, code: DecodeFailure['code'] = 'invalid_frame'): DecodeResult {
  const result: DecodeFailure = { ok: false, code, reason };
  if (frame && typeof frame.invocation_id === 'string' && frame.type === 'invokefunction') result.invocationId = frame.invocation_id;
  if (frame && typeof frame.function_id === 'string') result.functionId = frame.function_id;
  return result;
}

/**
 * Parses and checks one text frame from a worker. Hand-written checks (no schema library) because
 * this runs for every frame on the hot path. Unknown fields are ignored (iii-sdk sends `message_type`).
 */
/** Deepest nesting of objects/arrays a frame may have (JSON.stringify overflows the stack near 5,000). */
export const MAX_FRAME_DEPTH = 256;

/** True when `text` nests objects/arrays deeper than `limit` (strings are skipped). */
function tooDeep(text: string, limit: number): boolean {
  // Each level takes at least two characters, so short frames (nearly all of them) skip the scan.
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

const WANTED_KEYS = new Set(['type', 'invocation_id', 'function_id']);

/** The index of the quote closing the string that opens at `start` (or the text's length when it never closes). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34 /* " */) return i;
  }
  return text.length;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    i++;
  }
  return i;
}

/**
 * The string values of the top-level keys `type`, `invocation_id` and `function_id` of a frame too deep to
 * parse, in one pass over the text (values with escapes are skipped: ids never have them).
 */
function topLevelStrings(text: string): Partial<Record<'type' | 'invocation_id' | 'function_id', string>> {
  const out: Partial<Record<'type' | 'invocation_id' | 'function_id', string>> = {};
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(text, i);
      if (depth === 1) {
        const colon = skipSpace(text, end + 1);
        const key = text.slice(i + 1, end);
        if (text.charCodeAt(colon) === 58 /* : */ && WANTED_KEYS.has(key)) {
          const start = skipSpace(text, colon + 1);
          if (text.charCodeAt(start) === 34) {
            const valueEnd = stringEnd(text, start);
            const value = text.slice(start + 1, valueEnd);
            if (!value.includes('\\')) out[key as keyof typeof out] = value;
            i = valueEnd;
            continue;
          }
        }
      }
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return out;
}

export function decodeWorkerFrame(text: string): DecodeResult {
  if (tooDeep(text, MAX_FRAME_DEPTH)) {
    const result: DecodeFailure = { ok: false, code: 'invalid_frame', reason: `frame nests objects or arrays deeper than ${MAX_FRAME_DEPTH} levels` };
    // Still answer a call: its id and function are top-level fields, wherever they are in the text.
    const top = topLevelStrings(text);
    if (top.type === 'invokefunction' && top.invocation_id !== undefined && isUuid(top.invocation_id)) result.invocationId = top.invocation_id;
    if (top.function_id !== undefined && top.function_id.length <= 256) result.functionId = top.function_id;
    return result;
  }
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return fail('frame is not valid JSON');
  }
  if (!isObject(frame)) return fail('frame must be a JSON object');
  const f = frame;
  switch (f.type) {
    case 'invokefunction': {
      const id = f.invocation_id;
      if (id !== undefined && id !== null && id !== '' && !isUuid(id)) return fail('invocation_id must be a UUID', f);
      const fnReason = checkFunctionId(f.function_id);
      if (fnReason) return badFunctionId('function_id', fnReason, f.function_id, f);
      const actionReason = checkAction(f.action);
      if (actionReason) return fail(actionReason, f);
      if (!optString(f.traceparent) || !optString(f.baggage)) return fail('traceparent and baggage must be strings', f);
      if (f.timeout_ms !== undefined && !(typeof f.timeout_ms === 'number' && f.timeout_ms > 0 && f.timeout_ms <= 2_147_483_647)) {
        return fail('timeout_ms must be a positive number of milliseconds', f);
      }
      if (id === '') f.invocation_id = undefined;
      return { ok: true, message: f as unknown as WorkerToEngine };
    }
    case 'invocationresult':
      if (typeof f.invocation_id !== 'string') return fail('invocation_id must be a string', f);
      if (f.error !== undefined && f.error !== null && !isObject(f.error)) return fail('error must be an object', f);
      // Trace fields that are not strings are dropped rather than passed on to the caller (whose SDK
      // would refuse the whole answer and wait for its time-out): the result itself is good.
      if (f.traceparent !== undefined && typeof f.traceparent !== 'string') delete f.traceparent;
      if (f.baggage !== undefined && typeof f.baggage !== 'string') delete f.baggage;
      return { ok: true, message: f as unknown as WorkerToEngine };
    case 'registerfunction': {
      const reason = checkFunctionId(f.id);
      if (reason) return badFunctionId('id', reason, f.id, f);
      if (!optString(f.description)) return fail('description must be a string', f);
      if (!optObject(f.metadata)) return fail('metadata must be an object', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    }
    case 'unregisterfunction':
    case 'unregistertriggertype':
      if (typeof f.id !== 'string' || f.id === '') return fail('id must be a non-empty string', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    case 'registertrigger': {
      if (typeof f.id !== 'string' || f.id === '') return fail('id must be a non-empty string', f);
      if (typeof f.trigger_type !== 'string' || f.trigger_type === '') return fail('trigger_type must be a non-empty string', f);
      const fnReason = checkFunctionId(f.function_id);
      if (fnReason) return badFunctionId('function_id', fnReason, f.function_id, f);
      if (!optObject(f.metadata)) return fail('metadata must be an object', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    }
    case 'unregistertrigger':
      if (typeof f.id !== 'string' || f.id === '') return fail('id must be a non-empty string', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    case 'registertriggertype':
      if (typeof f.id !== 'string' || f.id === '') return fail('id must be a non-empty string', f);
      if (!optString(f.description)) return fail('description must be a string', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    case 'triggerregistrationresult':
      if (typeof f.id !== 'string') return fail('id must be a string', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    case 'registerservice':
      if (typeof f.id !== 'string' || f.id === '') return fail('id must be a non-empty string', f);
      return { ok: true, message: f as unknown as WorkerToEngine };
    case 'ping':
    case 'pong':
      return { ok: true, message: f as unknown as WorkerToEngine };
    default:
      return fail(typeof f.type === 'string' ? `unknown frame type "${f.type}"` : 'frame has no "type" field', f);
  }
}

/** A missing or non-string id is a malformed frame; a string id that breaks the rule is `invalid_function_id`. */
function badFunctionId(field: string, rule: string, id: unknown, frame: Record<string, unknown>): DecodeResult {
  if (typeof id !== 'string') return fail(`${field} ${rule}`, frame);
  return fail(functionIdError(id) as string, frame, 'invalid_function_id');
}

export type { InvokeAction };
