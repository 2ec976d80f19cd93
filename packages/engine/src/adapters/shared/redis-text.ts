/** Texts about a Redis server that are safe to show: URLs without their password, reasons scrubbed of it. */

/** The URL with its password replaced by `***` (for messages and logs). */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');
  }
}

/** The (decoded) password of a Redis URL; `''` when it has none or cannot be parsed. */
export function redisUrlPassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

/** Replaces every occurrence of `password` in `text` by `***`, should a client message ever quote it. */
export function scrubPassword(text: string, password: string | undefined): string {
  return password ? text.split(password).join('***') : text;
}

/** `*?[]\` and `^` stand for themselves in a SCAN MATCH pattern once escaped with a backslash. */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\^]/g, '\\$&');
}
