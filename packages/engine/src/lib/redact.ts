/** The URL with its password replaced by `***` (for messages and logs). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');
  }
}

/** Config keys whose values are secrets: shown as `***`. */
const SECRET_KEY = /(password|passwd|secret|token|api[_-]?key|private[_-]?key|credential|authorization|cookie)/i;

/**
 * A copy of a config value that is safe to show an operator: values under secret-looking keys become
 * `***` and URLs lose their password.
 */
export function redactConfig(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('://') ? redactUrl(value) : value;
  if (Array.isArray(value)) return value.map(redactConfig);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? redactSecret(v) : redactConfig(v);
  return out;
}

/**
 * A value under a secret-looking key: `***` for a string or a number (each item of a list too); a flag
 * (`cors.credentials: true`) says nothing secret, and objects are looked into as usual.
 */
function redactSecret(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecret);
  if (value === null || value === undefined || typeof value === 'boolean') return value;
  return typeof value === 'object' ? redactConfig(value) : '***';
}
