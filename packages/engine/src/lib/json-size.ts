import { FlintError } from '@flint/protocol';

/**
 * The JSON text of `value`, or a FlintError `invalid_payload` when it takes more than `max` bytes
 * (`setting` names the cap in the message: `data is 2000 bytes as JSON, more than max_value_bytes (1024)`).
 * The exact byte count is taken only for texts that could be over (a character is 1 to 3 bytes).
 */
export function jsonWithin(field: string, value: unknown, max: number, setting: string): string {
  const json = JSON.stringify(value) ?? 'null';
  const size = json.length * 3 <= max ? json.length : Buffer.byteLength(json);
  if (size > max) throw new FlintError('invalid_payload', `${field} is ${size} bytes as JSON, more than ${setting} (${max})`);
  return json;
}
