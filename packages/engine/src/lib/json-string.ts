/** Text JSON.stringify writes as is between quotes: no control character, quote, backslash or surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes
const PLAIN_TEXT = /^[^\x00-\x1f"\\\ud800-\udfff]*$/;

/**
 * JSON.stringify(text), for the short strings spliced into every frame (function ids, trace context,
 * HTTP methods and paths): most need no escaping, and quoting them directly skips JSON.stringify's set-up,
 * which costs more than the string itself. Any other text goes through JSON.stringify.
 */
export function jsonString(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}
