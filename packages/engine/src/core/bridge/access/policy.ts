/**
 * What the workers of one bridge listener may do: the listener's `access` config, and for each
 * connection the answer of its auth function (upstream's rbac fields).
 */

/** A listener's `access` config, as plain values. */
export interface AccessConfig {
  authFunctionId?: string;
  authTimeoutMs: number;
  middlewareFunctionId?: string;
  middlewareTimeoutMs: number;
  onFunctionRegistration?: string;
  onTriggerRegistration?: string;
  onTriggerTypeRegistration?: string;
  /** `match(<glob>)` strings and `{metadata}` objects; undefined: every function is exposed. */
  exposeFunctions?: readonly (string | { metadata: Record<string, unknown> })[];
}

/**
 * Functions a worker of the listener may always call whatever its lists say, because the SDKs need them to
 * work at all (announcing the worker, channels for streamed bodies) or because they only list what the
 * worker may see (the listings are filtered by exposure).
 */
const ALWAYS_CALLABLE = new Set([
  'engine::workers::register',
  'engine::channels::create',
  'engine::functions::list',
  'engine::triggers::list',
  'engine::trigger-types::list',
  'engine::workers::list',
]);

/** A glob on function ids: `*` is any run of characters, `?` one character; everything else is literal. */
export function globMatcher(glob: string): (id: string) => boolean {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  const re = new RegExp(`^${source}$`, 's');
  return (id) => re.test(id);
}

type Matcher = (id: string) => boolean;

function matcherOf(list: unknown): Matcher | undefined {
  if (!Array.isArray(list)) return undefined;
  const matchers = list.filter((p): p is string => typeof p === 'string' && p !== '').map(globMatcher);
  return (id) => matchers.some((m) => m(id));
}

function strings(list: unknown): string[] | undefined {
  return Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : undefined;
}

/** Which functions a listener exposes to its workers (`expose_functions`). */
export class Exposure {
  private readonly globs: Matcher[];
  private readonly metadata: Record<string, unknown>[];

  constructor(patterns: AccessConfig['exposeFunctions']) {
    this.globs = (patterns ?? []).filter((p): p is string => typeof p === 'string').map((p) => globMatcher(p.slice('match('.length, -1)));
    this.metadata = (patterns ?? []).filter((p): p is { metadata: Record<string, unknown> } => typeof p === 'object').map((p) => p.metadata);
  }

  exposes(id: string, metadata: Record<string, unknown> | null | undefined): boolean {
    if (this.globs.some((m) => m(id))) return true;
    return this.metadata.some((wanted) => Object.entries(wanted).every(([key, value]) => metadata != null && equalJson(metadata[key], value)));
  }
}

function equalJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * One connection's rights: from its auth function's answer (`allowed_functions`, `forbidden_functions`,
 * `allowed_trigger_types`, `allow_function_registration` (default true), `allow_trigger_type_registration`
 * (default false), `function_registration_prefix`, `context`) and the listener's exposure. Lists hold
 * exact ids or globs (`orders::*`).
 */
export class WorkerPolicy {
  readonly context: unknown;
  /** `<prefix>::`, put before every function id this worker registers, or undefined. */
  readonly prefix: string | undefined;
  private readonly allowed: Matcher | undefined;
  private readonly forbidden: Matcher | undefined;
  private readonly triggerTypes: string[] | undefined;
  private readonly mayRegisterFunctions: boolean;
  private readonly mayRegisterTriggerTypes: boolean;

  constructor(
    answer: Record<string, unknown> | undefined,
    readonly exposure: Exposure | undefined,
  ) {
    const a = answer ?? {};
    this.context = a.context ?? null;
    this.allowed = matcherOf(a.allowed_functions);
    this.forbidden = matcherOf(a.forbidden_functions);
    this.triggerTypes = strings(a.allowed_trigger_types);
    // Without an auth function (no answer) a worker may register what it likes, as on an open listener.
    this.mayRegisterFunctions = a.allow_function_registration !== false;
    this.mayRegisterTriggerTypes = answer === undefined ? true : a.allow_trigger_type_registration === true;
    const prefix = a.function_registration_prefix;
    this.prefix = typeof prefix === 'string' && prefix !== '' ? `${prefix}::` : undefined;
  }

  /** Why this worker may not call `id` (with the function's metadata, for exposure), or undefined when it may. */
  refusesCall(id: string, metadata: Record<string, unknown> | null | undefined): string | undefined {
    if (ALWAYS_CALLABLE.has(id)) return undefined;
    if (this.forbidden?.(id)) return `function '${id}' not allowed (forbidden_functions)`;
    if (this.allowed && !this.allowed(id)) return `function '${id}' not allowed (not in allowed_functions)`;
    if (this.exposure && !this.exposure.exposes(id, metadata)) return `function '${id}' not allowed (not exposed by this listener: expose_functions)`;
    return undefined;
  }

  refusesFunctionRegistration(id: string): string | undefined {
    return this.mayRegisterFunctions ? undefined : `registering function '${id}' not allowed (allow_function_registration is false)`;
  }

  refusesTrigger(type: string): string | undefined {
    if (this.triggerTypes && !this.triggerTypes.includes(type)) return `trigger type '${type}' not allowed (not in allowed_trigger_types)`;
    return undefined;
  }

  refusesTriggerType(type: string): string | undefined {
    return this.mayRegisterTriggerTypes ? undefined : `providing trigger type '${type}' not allowed (allow_trigger_type_registration is not true)`;
  }

  /** The id a function this worker registers gets in the engine (the prefix is always put before it, as upstream does). */
  prefixed(id: string): string {
    return this.prefix === undefined ? id : this.prefix + id;
  }

  /** The id this worker knows a function of its own by. */
  unprefixed(id: string): string {
    return this.prefix !== undefined && id.startsWith(this.prefix) ? id.slice(this.prefix.length) : id;
  }
}
