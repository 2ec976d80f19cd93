import type { TriggerInfo } from '@flint/protocol';
import type { Logger } from '../core/logger.js';
import { CLUSTER_OWNER, type TriggerRegistry } from '../core/triggers.js';

/**
 * Trigger types whose triggers every engine of a cluster applies, whichever engine they were registered
 * on. Each fits because an event happens on exactly one engine: an HTTP request reaches one engine's
 * flint-http, a state or stream change goes through one engine's module (which alone runs the triggers,
 * even on a shared store), a stream client joins and leaves on the engine it is connected to, and a
 * queue's consumers compete for each message (on a shared Redis or RabbitMQ backend; on the builtin one
 * a topic's messages stay with the engine they were published on and its consumer calls the function
 * wherever it is).
 */
export const MIRRORED_TYPES: ReadonlySet<string> = new Set(['http', 'state', 'stream', 'stream:join', 'stream:leave', 'durable:subscriber']);

/**
 * Applies other engines' triggers of the mirrored types here, as triggers of this engine owned by the
 * cluster (`cluster:<node>:<trigger id>`), and takes them back when they go (or their engine does).
 */
export class TriggerMirror {
  /** Per engine: local trigger id → the JSON of what was applied (to notice a changed config). */
  private readonly mirrored = new Map<string, Map<string, string>>();

  constructor(
    private readonly triggers: TriggerRegistry,
    private readonly log: Logger,
  ) {}

  /** Makes the mirrored triggers of engine `node` match its listing `remote`. */
  sync(node: string, remote: TriggerInfo[]): void {
    const before = this.mirrored.get(node) ?? new Map<string, string>();
    const after = new Map<string, string>();
    for (const t of remote) {
      // Only types this engine serves: a type whose module is not loaded here would only park.
      if (!MIRRORED_TYPES.has(t.trigger_type) || !this.triggers.hasType(t.trigger_type)) continue;
      const id = `cluster:${node}:${t.id}`;
      const signature = JSON.stringify([t.trigger_type, t.function_id, t.config, t.metadata]);
      after.set(id, signature);
      if (before.get(id) === signature) continue;
      const record = { id, type: t.trigger_type, function_id: t.function_id, config: t.config, metadata: t.metadata, owner: CLUSTER_OWNER };
      void this.triggers.register(record).then((outcome) => {
        if (outcome.error) {
          this.log.warn(
            { trigger_id: t.id, node_id: node, code: outcome.error.code },
            `cannot serve the ${t.trigger_type} trigger of ${t.function_id} from engine ${node} here: ${outcome.error.message}`,
          );
        }
      });
    }
    for (const id of before.keys()) if (!after.has(id)) void this.triggers.unregister(id);
    if (after.size > 0) this.mirrored.set(node, after);
    else this.mirrored.delete(node);
  }

  /** Takes back every trigger mirrored from engine `node`. */
  drop(node: string): void {
    for (const id of this.mirrored.get(node)?.keys() ?? []) void this.triggers.unregister(id);
    this.mirrored.delete(node);
  }
}
