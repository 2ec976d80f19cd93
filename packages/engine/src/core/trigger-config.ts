import type { ZodType, z } from 'zod';

export type ConfigCheck = { ok: true; config: unknown } | { ok: false; message: string };

/**
 * Checks a trigger's config against its type's schema. The message names every problem, unknown
 * keys first (the likely typo), each naming its key:
 * `unknown key "scop" in state trigger config (known: scope, key, condition_function_id)`,
 * `http trigger config: api_path must be a string`.
 */
export function checkTriggerConfig(type: string, schema: ZodType, config: unknown): ConfigCheck {
  const result = schema.safeParse(config, { error: predicate });
  if (result.success) return { ok: true, config: result.data };
  const issues = [...result.error.issues].sort((a, b) => rank(a) - rank(b));
  return { ok: false, message: issues.map((issue) => describe(type, schema, issue)).join('; ') };
}

const rank = (issue: z.core.$ZodIssue) => (issue.code === 'unrecognized_keys' ? 0 : 1);

function describe(type: string, schema: ZodType, issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
    const known = issue.path.length === 0 ? knownKeys(schema) : undefined;
    const noun = issue.keys.length === 1 ? 'key' : 'keys';
    const hint = known === undefined ? '' : known === '' ? ' (it takes no keys)' : ` (known: ${known})`;
    return `unknown ${noun} ${keys} in ${type} trigger config${where ? ` at ${where}` : ''}${hint}`;
  }
  const subject = `${type} trigger config${where ? `: ${where}` : ''}`;
  // The engine's own phrasing ("must be a string") reads after the key; zod's default after a colon.
  return /^(is|must) /.test(issue.message) ? `${subject} ${issue.message}` : `${subject}: ${issue.message}`;
}

/** Wording of the common issues as a predicate of the key; schemas may give their own. */
function predicate(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'is required';
      const expected = issue.expected === 'record' ? 'object' : issue.expected;
      return `must be ${article(expected)} ${expected}`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'must not be empty';
      return undefined;
    default:
      return undefined;
  }
}

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

function knownKeys(schema: ZodType): string | undefined {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  if (!shape || typeof shape !== 'object') return undefined;
  return Object.keys(shape).join(', ');
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out ? `.${String(key)}` : String(key);
  return out;
}
