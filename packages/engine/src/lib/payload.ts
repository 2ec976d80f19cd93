import { FlintError } from '@flint/protocol';

export type PayloadObject = Record<string, unknown>;

/**
 * A call's input as an object, or a FlintError `invalid_payload`. With `optional`, a missing input
 * (null or undefined) is an empty object: for functions whose fields are all optional.
 */
export function payloadObject(data: unknown, options: { optional?: boolean } = {}): PayloadObject {
  if (options.optional && (data === null || data === undefined)) return {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new FlintError('invalid_payload', 'payload must be an object');
  return data as PayloadObject;
}

/** An optional non-negative integer field (`fallback` when absent), at most `max`; else `invalid_payload`. */
export function optionalCount(d: PayloadObject, key: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = d[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new FlintError('invalid_payload', `${key} must be an integer from 0 to ${max}`);
  }
  return value;
}
