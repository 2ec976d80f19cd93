import type { ErrorBody } from '@flint/protocol';
import { jsonString } from '../../lib/json-string.js';
import type { TraceContext } from '../api/functions.js';

/**
 * The `invocationresult` frame answering a worker's call, written out by hand like the invoke frame
 * (invoker.ts): only the result and the error go through JSON.stringify, so the fixed keys and the ids
 * are not escaped again on every answer. `invocationId` is the caller's, which the frame decoder only
 * accepts as a UUID (hex digits and dashes: nothing to escape). A result of null or undefined is left
 * out, as the upstream engine does: iii-sdk callers then get `undefined`, what their code tests for, and
 * @flint/sdk turns it into null. Throws what JSON.stringify throws for a result it cannot serialise.
 */
export function resultFrame(invocationId: string, functionId: string, result: unknown, error: ErrorBody | undefined, trace: TraceContext | undefined): string {
  let frame = `{"type":"invocationresult","invocation_id":"${invocationId}","function_id":${jsonString(functionId)}`;
  if (result !== null && result !== undefined) {
    const json = JSON.stringify(result) as string | undefined;
    if (json !== undefined) frame += `,"result":${json}`;
  }
  if (error !== undefined) frame += `,"error":${JSON.stringify(error)}`;
  if (trace?.traceparent !== undefined) frame += `,"traceparent":${jsonString(trace.traceparent)}`;
  if (trace?.baggage !== undefined) frame += `,"baggage":${jsonString(trace.baggage)}`;
  return `${frame}}`;
}
