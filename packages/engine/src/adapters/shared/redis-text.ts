/** `*?[]\` and `^` stand for themselves in a SCAN MATCH pattern once escaped with a backslash. */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\^]/g, '\\$&');
}
