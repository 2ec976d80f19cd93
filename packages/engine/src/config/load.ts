import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Document, LineCounter, type Node, isMap, isNode, isScalar, isSeq, parseDocument, visit } from 'yaml';
import type { z } from 'zod';
import type { AdapterCatalog, ModuleDefinition } from '../core/module-api.js';
import { type EngineConfig, type ResolvedModule, engineConfigSchema, moduleEntrySchema } from './schema.js';
import { type Substitution, type Substitutions, pathKey, restoreStrings, substituteEnv } from './substitute.js';

export const DEFAULT_CONFIG_FILE = 'flint-config.yaml';

export interface ConfigProblem {
  path: string;
  message: string;
  line?: number;
}

/** Thrown when a config cannot be loaded; `message` lists every problem, one per line. */
export class ConfigError extends Error {
  constructor(
    readonly problems: ConfigProblem[],
    readonly file: string | undefined,
  ) {
    super(problems.map((p) => formatProblem(p, file)).join('\n'));
    this.name = 'ConfigError';
  }
}

function formatProblem(p: ConfigProblem, file: string | undefined): string {
  const where = file ? ` (${file}${p.line ? `:${p.line}` : ''})` : '';
  return `${p.path || '(root)'}: ${p.message}${where}`;
}

export interface LoadOptions {
  /** Explicit config file (`--config`); must exist. */
  path?: string;
  /** Folder searched for flint-config.yaml when no path is given. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Config given as an object instead of a file (tests, embedding). */
  object?: unknown;
  /** Modules the engine knows. */
  modules: readonly ModuleDefinition[];
  /** Adapters the engine knows, for the modules' adapter references. */
  adapters: AdapterCatalog;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out ? `.${String(key)}` : String(key);
  return out;
}

/** Loads, substitutes, validates and freezes the engine config. */
export function loadConfig(options: LoadOptions): EngineConfig {
  const cwd = options.cwd ?? process.cwd();
  let file: string | undefined;
  let raw: unknown;
  let locate: (path: PropertyKey[]) => number | undefined = () => undefined;

  if (options.object !== undefined) {
    raw = options.object;
  } else {
    file = options.path ? resolve(cwd, options.path) : existsSync(resolve(cwd, DEFAULT_CONFIG_FILE)) ? resolve(cwd, DEFAULT_CONFIG_FILE) : undefined;
    if (options.path && (!file || !existsSync(file))) throw new ConfigError([{ path: '', message: `config file not found: ${file}` }], undefined);
    if (file) {
      const text = readFileSync(file, 'utf8');
      const lineCounter = new LineCounter();
      const doc = parseDocument(text, { lineCounter, prettyErrors: false });
      if (doc.errors.length > 0) {
        throw new ConfigError(
          doc.errors.map((e) => ({
            path: '',
            message: `invalid YAML: ${e.message.split('\n')[0]}`,
            line: e.linePos?.[0]?.line ?? lineCounter.linePos(e.pos[0]).line,
          })),
          file,
        );
      }
      const aliasProblems: ConfigProblem[] = [];
      visit(doc, {
        Alias(_, node) {
          if (!node.resolve(doc))
            aliasProblems.push({
              path: '',
              message: `invalid YAML: unknown alias *${node.source}`,
              line: node.range ? lineCounter.linePos(node.range[0]).line : undefined,
            });
        },
      });
      if (aliasProblems.length > 0) throw new ConfigError(aliasProblems, file);
      raw = doc.toJS() ?? {};
      locate = (path) => lineOf(doc, lineCounter, path);
    }
  }

  const problems: ConfigProblem[] = [];
  const report = (path: PropertyKey[], message: string) => problems.push({ path: formatPath(path), message, line: locate(path) });

  if (raw === undefined) raw = { modules: options.modules.map((m) => ({ name: m.name })) };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError([{ path: '', message: 'the config must be a mapping (key: value)' }], file);
  }
  const subProblems: { path: (string | number)[]; message: string }[] = [];
  const substitutions: Substitutions = new Map();
  const substituted = substituteEnv(raw, options.env ?? process.env, subProblems, substitutions);
  // `bridge` written as one listener is checked as a list of one: its problems are named (and its
  // substituted values found) as written.
  const bridgeIsList = Array.isArray((substituted as { bridge?: unknown }).bridge);
  const asWritten = (issue: z.core.$ZodIssue): z.core.$ZodIssue =>
    !bridgeIsList && issue.path[0] === 'bridge' && issue.path[1] === 0 ? { ...issue, path: ['bridge', ...issue.path.slice(2)] } : issue;
  const parse = <T>(schema: z.ZodType<T>, value: unknown, prefix: PropertyKey[]) => {
    const first = schema.safeParse(value);
    return !first.success && restoreStrings(value, prefix, first.error.issues.map(asWritten), substitutions) ? schema.safeParse(value) : first;
  };
  for (const p of subProblems) report(p.path, p.message);
  // A value whose variable is missing is reported once, as such (not again as a wrong type).
  const unset = new Set(subProblems.map((p) => pathKey(p.path)));
  const reportIssue = (issue: z.core.$ZodIssue, prefix: PropertyKey[]) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) report([...path, key], 'unknown key');
      return;
    }
    if (unset.has(pathKey(path))) return;
    report(path, describeValueProblem(issue.message, substitutions.get(pathKey(path)), valueAt(substituted, path)));
  };

  const parsed = parse(engineConfigSchema, substituted, []);
  if (!parsed.success) for (const issue of parsed.error.issues) reportIssue(asWritten(issue), []);
  const rawModules = (substituted as { modules?: unknown }).modules;
  const entries = parsed.success
    ? parsed.data.modules
    : Array.isArray(rawModules)
      ? rawModules.map((m) => {
          const r = moduleEntrySchema.safeParse(m);
          return r.success ? r.data : undefined;
        })
      : [];

  const modules: ResolvedModule[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    if (!entry) return; // its problems were reported by the top-level parse
    const requested = (entry.name ?? entry.class) as string;
    const def = options.modules.find((m) => m.name === requested || m.aliases?.includes(requested));
    if (!def) {
      const known = options.modules.map((m) => m.name).join(', ') || 'none';
      report(['modules', i, entry.name ? 'name' : 'class'], `unknown module "${requested}" (known: ${known})`);
      return;
    }
    if (seen.has(def.name)) report(['modules', i], `module ${def.name} is listed twice`);
    seen.add(def.name);
    const result = parse(def.configSchema, entry.config ?? {}, ['modules', i, 'config']);
    if (!result.success) for (const issue of result.error.issues) reportIssue(issue, ['modules', i, 'config']);
    else modules.push({ name: def.name, config: resolveAdapters(def, result.data, options.adapters, ['modules', i, 'config'], report) });
  });
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems, file);

  const fromEnv: Record<string, string> = {};
  for (const [key, substitution] of substitutions) fromEnv[formatPath(JSON.parse(key) as PropertyKey[])] = substitution.from;
  const bridges = parsed.data.bridge.map((listener, i) => ({ ...listener, path: bridgeIsList ? `bridge[${i}]` : 'bridge' }));
  const config: EngineConfig = {
    ...parsed.data,
    bridge: bridges[0] as EngineConfig['bridge'],
    bridges,
    modules,
    configDir: file ? dirname(file) : cwd,
    configFile: file,
    fromEnv,
  };
  return deepFreeze(config);
}

/** Replaces each adapter reference of a module's parsed config with the validated one (problems are reported). */
function resolveAdapters(
  def: ModuleDefinition,
  config: unknown,
  catalog: AdapterCatalog,
  prefix: PropertyKey[],
  report: (path: PropertyKey[], message: string) => void,
): unknown {
  if (!def.adapters) return config;
  const out = { ...(config as Record<string, unknown>) };
  for (const [key, family] of Object.entries(def.adapters)) {
    if (out[key] === undefined) continue;
    const resolved = catalog.resolve(family, out[key]);
    if (resolved.ok) out[key] = resolved.ref;
    else for (const problem of resolved.problems) report([...prefix, key, ...problem.path], problem.message);
  }
  return out;
}

/**
 * The message of a problem with a value. A value from `${VAR}` is shown with its source
 * (`"abc" (from ${FLINT_HTTP_PORT}) is not a valid port (0-65535)`); a message worded as a predicate
 * of the value (`is not a valid port …`, from the field's schema) is preceded by the value.
 */
function describeValueProblem(message: string, substitution: Substitution | undefined, value: unknown): string {
  const predicate = /^(is|must) /.test(message);
  if (substitution) return `${JSON.stringify(substitution.text)} (from ${substitution.from})${predicate ? ' ' : ': '}${message}`;
  if (predicate && value !== undefined) return `${showValue(value)} ${message}`;
  return message;
}

function showValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function lineOf(doc: Document, counter: LineCounter, path: PropertyKey[]): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : nodeAt(doc, path.slice(0, n));
    if (node?.range) return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** The node that names `path`: the key of a mapping entry, or the item of a sequence. */
function nodeAt(doc: Document, path: PropertyKey[]): Node | undefined {
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1) as (string | number)[], true);
  const last = path[path.length - 1];
  if (isMap(parent)) {
    const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === last);
    return isNode(pair?.key) ? pair.key : undefined;
  }
  if (isSeq(parent) && typeof last === 'number') {
    const item = parent.items[last];
    return isNode(item) ? item : undefined;
  }
  return undefined;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
