import { parse as parseYamlScalar } from 'yaml';

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;
const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}$/;

export interface SubstitutionProblem {
  path: (string | number)[];
  message: string;
}

/**
 * Replaces `${VAR}` and `${VAR:default}` in every string of a parsed config. A value that is exactly
 * one reference takes the scalar type of the text it becomes (`port: ${PORT:3111}` is a number).
 */
export function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, problems: SubstitutionProblem[], path: (string | number)[] = []): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) {
      const text = lookup(whole[1] as string, whole[2], env, problems, path);
      return text === undefined ? value : scalar(text);
    }
    return value.replace(VAR, (match, name: string, fallback: string | undefined) => lookup(name, fallback, env, problems, path) ?? match);
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, problems, [...path, i]));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteEnv(v, env, problems, [...path, k]);
    return out;
  }
  return value;
}

function lookup(name: string, fallback: string | undefined, env: NodeJS.ProcessEnv, problems: SubstitutionProblem[], path: (string | number)[]): string | undefined {
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
