import { FlintError } from '@flint/protocol';
import { groupText } from '../../lib/group-text.js';
import type { BindOptions } from './types.js';

/** The group of every message of a FIFO queue that has no group field: one group, strictly in order. */
export const SINGLE_GROUP = '';

/**
 * The FIFO group of `data` for a queue bound with `options`; undefined for a queue that is not FIFO.
 * A string or number field is used as is; any other value as its JSON text. Throws
 * `message_group_missing` when the field is missing or null.
 */
export function groupOf(queue: string, data: unknown, options: BindOptions): string | undefined {
  const field = options.groupField;
  if (field === undefined) return options.fifo ? SINGLE_GROUP : undefined;
  const value = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>)[field] : undefined;
  if (value === undefined || value === null) {
    throw new FlintError('message_group_missing', `FIFO queue ${queue} needs field "${field}" in the message's data (missing or null)`);
  }
  return groupText(value);
}
