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
