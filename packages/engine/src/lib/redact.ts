/** Config keys whose values are secrets: shown as `***`. */
const SECRET_KEY = /(password|passwd|secret|token|api[_-]?key|private[_-]?key|credential|authorization|cookie)/i;
/** Query parameters that carry secrets besides those SECRET_KEY names (`?key=`, signed URLs' `?sig=`). */
const SECRET_PARAM = /^(key|sig|signature|auth|pass|pwd)$/i;

/**
 * The URL with its password and the values of secret-looking query parameters (`?token=`,
 * `?api_key=`, `?sig=`) replaced by `***` (for messages, logs and `engine::config::get`).
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url
      .replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@')
      .replace(/([?&][^=&#]+=)[^&#]*/g, (whole, name: string) => (isSecretParam(name.slice(1, -1)) ? `${name}***` : whole));
  }
  let changed = false;
  if (parsed.password !== '') {
    parsed.password = '***';
    changed = true;
  }
  for (const name of new Set(parsed.searchParams.keys())) {
    if (!isSecretParam(name)) continue;
    parsed.searchParams.set(name, '***');
    changed = true;
  }
  return changed ? parsed.toString() : url;
}

function isSecretParam(name: string): boolean {
  return SECRET_KEY.test(name) || SECRET_PARAM.test(name);
}

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
