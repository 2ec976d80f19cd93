import { isErrorBody } from './errors.js';
import { checkAction, isObject, optObject, optString } from './frame-checks.js';
import type { EngineToWorker } from './messages.js';

export type EngineDecodeResult =
  | { ok: true; message: EngineToWorker }
  | {
      ok: false;
      reason: string;
      /** Set when the frame is well-formed but of a type no engine frame has (a newer engine may send more): callers may ignore it quietly. */
      unknownType?: string;
    };

function fail(reason: string): EngineDecodeResult {
  return { ok: false, reason };
}

/**
 * Parses and checks one text frame from the engine (a frame of `EngineToWorker`). Hand-written checks
 * (no schema library) because this runs for every frame a worker receives: one JSON.parse, a switch,
 * typeof checks; the reasons are constant strings. Unknown fields are ignored; the message returned
 * is the parsed object itself.
 */
export function decodeEngineFrame(text: string): EngineDecodeResult {
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
      if (typeof f.function_id !== 'string') return fail('invokefunction: function_id must be a string');
      const id = f.invocation_id;
      if (id !== undefined && id !== null && typeof id !== 'string') return fail('invokefunction: invocation_id must be a string');
      if (!optString(f.traceparent) || !optString(f.baggage)) return fail('invokefunction: traceparent and baggage must be strings');
      if (f.timeout_ms !== undefined && typeof f.timeout_ms !== 'number') return fail('invokefunction: timeout_ms must be a number');
      const actionReason = checkAction(f.action);
      if (actionReason) return fail(`invokefunction: ${actionReason}`);
      return { ok: true, message: f as unknown as EngineToWorker };
    }
    case 'invocationresult':
      if (typeof f.invocation_id !== 'string') return fail('invocationresult: invocation_id must be a string');
      if (!optString(f.function_id)) return fail('invocationresult: function_id must be a string');
      if (!optObject(f.error)) return fail('invocationresult: error must be an object');
      if (!optString(f.traceparent) || !optString(f.baggage)) return fail('invocationresult: traceparent and baggage must be strings');
      return { ok: true, message: f as unknown as EngineToWorker };
    case 'workerregistered':
      if (typeof f.worker_id !== 'string') return fail('workerregistered: worker_id must be a string');
      return { ok: true, message: f as unknown as EngineToWorker };
    case 'registertrigger':
      if (typeof f.id !== 'string') return fail('registertrigger: id must be a string');
      if (typeof f.trigger_type !== 'string') return fail('registertrigger: trigger_type must be a string');
      if (typeof f.function_id !== 'string') return fail('registertrigger: function_id must be a string');
      if (!optObject(f.metadata)) return fail('registertrigger: metadata must be an object');
      return { ok: true, message: f as unknown as EngineToWorker };
    case 'unregistertrigger':
      if (typeof f.id !== 'string') return fail('unregistertrigger: id must be a string');
      if (!optString(f.trigger_type)) return fail('unregistertrigger: trigger_type must be a string');
      return { ok: true, message: f as unknown as EngineToWorker };
    case 'triggerregistrationresult':
      if (typeof f.id !== 'string') return fail('triggerregistrationresult: id must be a string');
      if (!optString(f.trigger_type) || !optString(f.function_id)) return fail('triggerregistrationresult: trigger_type and function_id must be strings');
      if (!optObject(f.error)) return fail('triggerregistrationresult: error must be an object');
      if (f.parked !== undefined && typeof f.parked !== 'boolean') return fail('triggerregistrationresult: parked must be a boolean');
      return { ok: true, message: f as unknown as EngineToWorker };
    case 'pong':
      return { ok: true, message: f as unknown as EngineToWorker };
    case 'error':
      if (!isErrorBody(f.error)) return fail('error: error must be an object with a string code and message');
      return { ok: true, message: f as unknown as EngineToWorker };
    default:
      if (typeof f.type !== 'string') return fail('frame has no "type" field');
      return { ok: false, reason: `unknown frame type "${f.type}"`, unknownType: f.type };
  }
}
