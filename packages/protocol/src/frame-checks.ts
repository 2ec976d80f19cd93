/**
 * Small type checks shared by the frame decoders (decode.ts for worker frames, decode-engine.ts for
 * engine frames). They run for every frame: plain typeof checks, nothing allocated.
 */

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Absent or a string. */
export const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** Absent, null or an object. */
export const optObject = (v: unknown): boolean => v === undefined || v === null || isObject(v);

/** Returns a reason when `action` (absent, null or an InvokeAction) is malformed, else undefined. */
export function checkAction(action: unknown): string | undefined {
  if (action === undefined || action === null) return undefined;
  if (!isObject(action)) return 'action must be an object';
  if (action.type === 'void') return undefined;
  if (action.type === 'enqueue') return typeof action.queue === 'string' && action.queue.length > 0 ? undefined : 'action.queue must be a non-empty string';
  return `action.type must be "void" or "enqueue"`;
}
