import { parse as parseYamlScalar } from 'yaml';

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;
const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}$/;

export interface SubstitutionProblem {
  path: (string | number)[];
  message: string;
}

/** A value that came from `${VAR}` references. */
export interface Substitution {
  /** The text the value became. */
  text: string;
  /** Where it came from, for messages: `${FLINT_HTTP_PORT}`, or `the default of ${FLINT_HTTP_PORT:3111}`. */
  from: string;
  /** A whole-value reference whose text became a number or boolean. */
  typed: boolean;
}

/** The substituted values of a config, by JSON path (`pathKey`). */
export type Substitutions = Map<string, Substitution>;

export const pathKey = (path: readonly PropertyKey[]): string => JSON.stringify(path);

/**
 * Replaces `${VAR}` and `${VAR:default}` in every string of a parsed config. A value that is exactly
 * one reference takes the scalar type of the text it becomes (`port: ${PORT:3111}` is a number).
 * `substitutions` remembers every substituted value with its source, so that a field that wants a
 * string can get the text back and a problem with the value can name the variable.
 */
export function substituteEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  problems: SubstitutionProblem[],
  substitutions: Substitutions,
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') {
    const sources: string[] = [];
    const resolve = (name: string, fallback: string | undefined) => {
      const text = lookup(name, fallback, env, problems, path);
      if (text !== undefined) sources.push(env[name] !== undefined ? `\${${name}}` : `the default of \${${name}:${fallback}}`);
      return text;
    };
    const whole = WHOLE.exec(value);
    if (whole) {
      const text = resolve(whole[1] as string, whole[2]);
      if (text === undefined) return value;
      const converted = scalar(text);
      substitutions.set(pathKey(path), { text, from: sources.join(', '), typed: converted !== text });
      return converted;
    }
    const text = value.replace(VAR, (match, name: string, fallback: string | undefined) => resolve(name, fallback) ?? match);
    if (sources.length > 0) substitutions.set(pathKey(path), { text, from: sources.join(', '), typed: false });
    return text;
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, problems, substitutions, [...path, i]));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteEnv(v, env, problems, substitutions, [...path, k]);
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
  substitutions: Substitutions,
): boolean {
  let changed = false;
  for (const issue of issues) {
    if (issue.code !== 'invalid_type' || issue.expected !== 'string') continue;
    const substitution = substitutions.get(pathKey([...prefix, ...issue.path]));
    if (!substitution?.typed || issue.path.length === 0) continue;
    const text = substitution.text;
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
