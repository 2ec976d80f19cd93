import type { FunctionRegistry } from '../functions.js';
import type { Holder, TriggerRegistry } from '../triggers.js';
import type { WorkerConnection } from './connection.js';

/** Function id prefixes that belong to the engine and its modules: no worker may register such an id. */
export const RESERVED_FUNCTION_PREFIXES = ['engine::', 'state::', 'stream::', 'flint::'] as const;

/** Trigger types Flint's modules provide or will provide: no worker may provide them (nor any `engine::` type). */
export const RESERVED_TRIGGER_TYPES: ReadonlySet<string> = new Set([
  'http',
  'state',
  'cron',
  'log',
  'durable:subscriber',
  'subscribe',
  'stream',
  'stream:join',
  'stream:leave',
]);
const ENGINE_TYPE_PREFIX = 'engine::';

/**
 * A custom stream's functions, which workers provide by design: iii-sdk's `createStream(name, impl)`
 * registers `stream::get(name)`, `stream::set(name)`, … for the stream module to call (`update` too, for
 * workers that implement it).
 */
const CUSTOM_STREAM_FUNCTION = /^stream::(get|set|delete|list|list_groups|update)\(.+\)$/;

/** Why a worker may not register function `id` (for the `function_id_reserved` message), or undefined when it may. */
export function functionReservation(id: string, functions: FunctionRegistry): string | undefined {
  const module = functions.moduleOf(id);
  if (module !== undefined) return `provided by module ${module}`;
  if (CUSTOM_STREAM_FUNCTION.test(id)) return undefined;
  const prefix = RESERVED_FUNCTION_PREFIXES.find((p) => id.startsWith(p));
  return prefix === undefined ? undefined : `the prefix ${prefix} belongs to the engine and its modules`;
}

/** Why a worker may not provide trigger type `id` (for the `trigger_type_reserved` message), or undefined when it may. */
export function triggerTypeReservation(id: string, triggers: TriggerRegistry): string | undefined {
  const holder = triggers.typeHolder(id);
  if (holder?.module !== undefined) return `provided by module ${holder.module}`;
  if (id.startsWith(ENGINE_TYPE_PREFIX)) return `the prefix ${ENGINE_TYPE_PREFIX} belongs to the engine`;
  return RESERVED_TRIGGER_TYPES.has(id) ? "the name is reserved for Flint's modules" : undefined;
}

/**
 * Whether `claimant` must be refused what `holder` holds: a module's, or another connection's that is
 * still live and that the claimant did not succeed (a worker's own reconnection takes over).
 */
export function heldAgainst(holder: Holder | undefined, claimant: WorkerConnection): boolean {
  if (!holder) return false;
  if (!holder.conn) return true;
  return holder.conn !== claimant && holder.conn.live && !holder.conn.succeededBy(claimant);
}

/** `module flint-state`, `worker billing (id 1a2b…)` or `connection 1a2b…` (a client that never announced itself). */
export function describeHolder(holder: Holder): string {
  if (!holder.conn) return `module ${holder.module}`;
  const name = holder.conn.metadata?.name;
  return name ? `worker ${name} (id ${holder.conn.id})` : `connection ${holder.conn.id}`;
}
