/**
 * A FIFO group field's value as a group name: a string as is, a number or boolean as text, anything
 * else as its JSON. Shared by the queue adapters (topic messages) and the queue module (named queues),
 * so a group means the same everywhere.
 */
export function groupText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}
