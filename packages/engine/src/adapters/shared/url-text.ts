/** Texts about a server URL that are safe to show: the URL without its password, reasons scrubbed of it. */
export { redactUrl } from '../../lib/redact.js';

/** The (decoded) password of a URL; `''` when it has none or cannot be parsed. */
export function urlPassword(url: string): string {
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
