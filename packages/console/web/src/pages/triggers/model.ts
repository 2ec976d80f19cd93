import type { TriggerInfo } from '../../../../src/api-types.js';

/** Trigger types provided by the engine's modules, in the order the page groups them. */
export const MODULE_GROUPS = ['http', 'durable:subscriber', 'cron', 'state', 'stream', 'log', 'subscribe'] as const;

const STREAM_TYPES = new Set(['stream', 'stream:join', 'stream:leave']);
const MODULE_TYPES = new Set<string>([...MODULE_GROUPS, ...STREAM_TYPES]);

/** The group a trigger type is listed under: the stream types share one, every other type has its own. */
export function groupOf(type: string): string {
  return STREAM_TYPES.has(type) ? 'stream' : type;
}

/** Whether a type comes from a module (or the engine) rather than from a worker's registerTriggerType. */
export function isModuleType(type: string): boolean {
  return MODULE_TYPES.has(type) || type.startsWith('engine::');
}

/** The heading of a group. */
export function groupLabel(group: string): string {
  switch (group) {
    case 'http':
      return 'HTTP routes';
    case 'durable:subscriber':
      return 'Queue subscribers';
    case 'cron':
      return 'Cron schedules';
    case 'state':
      return 'State changes';
    case 'stream':
      return 'Streams';
    case 'log':
      return 'Log records';
    case 'subscribe':
      return 'Pub/sub subscribers';
    default:
      return group;
  }
}

/** Groups sorted: the module types in their fixed order, then the others alphabetically. */
export function sortGroups(groups: string[]): string[] {
  const rank = (g: string) => {
    const i = (MODULE_GROUPS as readonly string[]).indexOf(g);
    return i === -1 ? MODULE_GROUPS.length : i;
  };
  return [...groups].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** A trigger's config as a plain record (empty when it is not an object). */
export function configOf(t: Pick<TriggerInfo, 'config'>): Record<string, unknown> {
  return t.config && typeof t.config === 'object' && !Array.isArray(t.config) ? (t.config as Record<string, unknown>) : {};
}

/** A config value as a string, or undefined when it is missing or not a string/number. */
export function configString(t: Pick<TriggerInfo, 'config'>, key: string): string | undefined {
  const v = configOf(t)[key];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** An http api_path with exactly one leading `/`. */
export function displayPath(apiPath: string | undefined): string {
  const segments = (apiPath ?? '').split('/').filter((s) => s !== '');
  return `/${segments.join('/')}`;
}

/** One line saying what a trigger listens to. */
export function summarize(t: TriggerInfo): string {
  switch (t.trigger_type) {
    case 'http':
      return `${(configString(t, 'http_method') ?? 'GET').toUpperCase()} ${displayPath(configString(t, 'api_path'))}`;
    case 'cron': {
      const tz = configString(t, 'timezone');
      return `${configString(t, 'expression') ?? '(no expression)'}${tz ? ` (${tz})` : ''}`;
    }
    case 'durable:subscriber':
    case 'subscribe':
      return configString(t, 'topic') ?? '(no topic)';
    case 'state': {
      const scope = configString(t, 'scope');
      const key = configString(t, 'key');
      return `${scope ? `scope ${scope}` : 'every scope'}${key ? `, key ${key}` : ''}`;
    }
    case 'log': {
      const level = configString(t, 'level');
      const min = configString(t, 'min_level');
      if (min) return `level ≥ ${min}`;
      return level && level !== 'all' ? `level ${level}` : 'all levels';
    }
    case 'stream':
    case 'stream:join':
    case 'stream:leave': {
      const name = configString(t, 'stream_name');
      return name ? `${t.trigger_type} ${name}` : t.trigger_type;
    }
    default:
      return t.trigger_type;
  }
}

/** Every string and number inside a value, for the search box. */
function collectText(value: unknown, out: string[], depth = 0): void {
  if (depth > 6 || value === null || value === undefined) return;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const v of value) collectText(v, out, depth + 1);
  } else if (typeof value === 'object') {
    for (const v of Object.values(value as Record<string, unknown>)) collectText(v, out, depth + 1);
  }
}

/** Whether a trigger matches the search text (id, type, function id and config values; case-insensitive). */
export function matchesSearch(t: TriggerInfo, q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (needle === '') return true;
  const hay: string[] = [t.id, t.trigger_type, t.function_id, summarize(t)];
  collectText(t.config, hay);
  return hay.some((s) => s.toLowerCase().includes(needle));
}
