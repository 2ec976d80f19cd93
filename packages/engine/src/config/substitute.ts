import { parse as parseYamlScalar } from 'yaml';

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;
const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}$/;

export interface SubstitutionProblem {
  path: (string | number)[];
  message: string;
}

/** Whole-value substitutions that became a number or boolean, by JSON path, with their text. */
export type TypedSubstitutions = Map<string, string>;

export const pathKey = (path: readonly PropertyKey[]): string => JSON.stringify(path);

/**
 * Replaces `${VAR}` and `${VAR:default}` in every string of a parsed config. A value that is exactly
 * one reference takes the scalar type of the text it becomes (`port: ${PORT:3111}` is a number);
 * `typed` remembers those so that a field that wants a string can get the text back.
 */
export function substituteEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  problems: SubstitutionProblem[],
  typed: TypedSubstitutions,
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) {
      const text = lookup(whole[1] as string, whole[2], env, problems, path);
      if (text === undefined) return value;
      const converted = scalar(text);
      if (converted !== text) typed.set(pathKey(path), text);
      return converted;
    }
    return value.replace(VAR, (match, name: string, fallback: string | undefined) => lookup(name, fallback, env, problems, path) ?? match);
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, problems, typed, [...path, i]));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteEnv(v, env, problems, typed, [...path, k]);
    return out;
  }
  return value;
}

/**
 * Gives back the text of typed substitutions where the schema wanted a string (a numeric token, say).
 * Returns true when something changed, so the caller validates again.
 */
export function restoreStrings(
  root: unknown,
  prefix: readonly PropertyKey[],
  issues: readonly { code: string; expected?: unknown; path: readonly PropertyKey[] }[],
  typed: TypedSubstitutions,
): boolean {
  let changed = false;
  for (const issue of issues) {
    if (issue.code !== 'invalid_type' || issue.expected !== 'string') continue;
    const text = typed.get(pathKey([...prefix, ...issue.path]));
    if (text === undefined || issue.path.length === 0) continue;
    let parent = root as Record<PropertyKey, unknown>;
    for (const key of issue.path.slice(0, -1)) parent = parent[key] as Record<PropertyKey, unknown>;
    parent[issue.path[issue.path.length - 1] as PropertyKey] = text;
    changed = true;
  }
  return changed;
}

function lookup(
  name: string,
  fallback: string | undefined,
  env: NodeJS.ProcessEnv,
  problems: SubstitutionProblem[],
  path: (string | number)[],
): string | undefined {
  const v = env[name];
  if (v !== undefined) return v;
  if (fallback !== undefined) return fallback;
  problems.push({ path, message: `environment variable ${name} is not set and has no default (write \${${name}:default})` });
  return undefined;
}

function scalar(text: string): unknown {
  if (text.trim() === '') return text;
  try {
    const parsed: unknown = parseYamlScalar(text);
    return typeof parsed === 'number' || typeof parsed === 'boolean' ? parsed : text;
  } catch {
    return text;
  }
}
