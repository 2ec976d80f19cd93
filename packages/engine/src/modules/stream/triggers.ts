import type { StreamJoinLeaveEvent } from '@flint/protocol';
import { z } from 'zod';
import type { ModuleContext, TraceContext, TriggerRecord, TriggerTypeProvider } from '../../core/module-api.js';
import { type FiringTrigger, fireTrigger } from '../../lib/triggers.js';
import type { StreamMessage } from './frames.js';

/** A `stream` trigger's config: the stream it watches (required), optional group and item filters. */
export const streamTriggerConfigSchema = z.strictObject({
  stream_name: z.string().min(1),
  group_id: z.string().optional(),
  item_id: z.string().optional(),
  condition_function_id: z.string().min(1).optional(),
});

/** A `stream:join` / `stream:leave` trigger's config: an optional condition, and (beyond the spec) an optional stream filter. */
export const joinLeaveTriggerConfigSchema = z.strictObject({
  stream_name: z.string().min(1).optional(),
  condition_function_id: z.string().min(1).optional(),
});

type StreamTriggerConfig = z.output<typeof streamTriggerConfigSchema>;
type JoinLeaveTriggerConfig = z.output<typeof joinLeaveTriggerConfigSchema>;

/** What `stream:join` and `stream:leave` handlers get. */
export type JoinLeaveEvent = StreamJoinLeaveEvent;

interface WatchTrigger extends FiringTrigger {
  stream: string;
  group: string | undefined;
  item: string | undefined;
}

interface JoinLeaveTrigger extends FiringTrigger {
  stream: string | undefined;
}

/** `stream` triggers: run with every frame of their stream (filtered by group and item) after the write; failures are logged. */
export class StreamTriggers implements TriggerTypeProvider<StreamTriggerConfig> {
  private readonly triggers = new Map<string, WatchTrigger>();

  constructor(private readonly ctx: ModuleContext) {}

  registerTrigger(t: TriggerRecord<StreamTriggerConfig>): void {
    const { stream_name, group_id, item_id, condition_function_id } = t.config;
    // Empty filters match everything, as upstream reads them.
    this.triggers.set(t.id, {
      id: t.id,
      type: 'stream',
      function_id: t.function_id,
      condition_function_id,
      stream: stream_name,
      group: group_id || undefined,
      item: item_id || undefined,
    });
  }

  unregisterTrigger(t: TriggerRecord<StreamTriggerConfig>): void {
    this.triggers.delete(t.id);
  }

  fire(message: StreamMessage, trace: TraceContext): void {
    for (const trigger of this.triggers.values()) {
      if (trigger.stream !== message.streamName) continue;
      if (trigger.group !== undefined && trigger.group !== message.groupId) continue;
      if (trigger.item !== undefined && trigger.item !== message.id) continue;
      void fireTrigger(this.ctx, trigger, message, {
        logger: this.ctx.logger,
        logFields: { stream_name: message.streamName, group_id: message.groupId, item_id: message.id },
        traceparent: trace.traceparent,
        baggage: trace.baggage,
        spanName: `stream ${message.event.type} ${message.streamName}`,
        attributes: { 'flint.stream.name': message.streamName, 'flint.stream.group': message.groupId, 'flint.stream.event': message.event.type },
      });
    }
  }
}

/** `stream:join` or `stream:leave` triggers. */
export class JoinLeaveTriggers implements TriggerTypeProvider<JoinLeaveTriggerConfig> {
  private readonly triggers = new Map<string, JoinLeaveTrigger>();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly type: 'stream:join' | 'stream:leave',
  ) {}

  registerTrigger(t: TriggerRecord<JoinLeaveTriggerConfig>): void {
    const { stream_name, condition_function_id } = t.config;
    this.triggers.set(t.id, { id: t.id, type: this.type, function_id: t.function_id, condition_function_id, stream: stream_name });
  }

  unregisterTrigger(t: TriggerRecord<JoinLeaveTriggerConfig>): void {
    this.triggers.delete(t.id);
  }

  /**
   * Runs every matching trigger (at once) and says whether the join may go on: not when a handler answered
   * `{unauthorized: true}`, nor when a handler or condition failed (a join is refused rather than let in
   * unchecked). A condition answering `false` skips its handler. For leaves the answer does not matter.
   */
  async run(event: JoinLeaveEvent): Promise<{ allowed: boolean; reason?: string }> {
    const matching = [...this.triggers.values()].filter((t) => t.stream === undefined || t.stream === event.stream_name);
    if (matching.length === 0) return { allowed: true };
    const outcomes = await Promise.all(
      matching.map((trigger) =>
        fireTrigger(this.ctx, trigger, event, {
          logger: this.ctx.logger,
          logFields: { stream_name: event.stream_name, group_id: event.group_id, subscription_id: event.subscription_id },
          spanName: `${this.type} ${event.stream_name}`,
          attributes: { 'flint.stream.name': event.stream_name, 'flint.stream.group': event.group_id },
        }),
      ),
    );
    for (const [i, outcome] of outcomes.entries()) {
      const fn = matching[i]?.function_id;
      if (outcome.status === 'failed') return { allowed: false, reason: `${fn} failed: ${outcome.error.message}` };
      if (outcome.status === 'invoked' && isRefusal(outcome.result)) return { allowed: false, reason: `${fn} answered unauthorized` };
    }
    return { allowed: true };
  }

  get size(): number {
    return this.triggers.size;
  }
}

function isRefusal(result: unknown): boolean {
  return typeof result === 'object' && result !== null && (result as { unauthorized?: unknown }).unauthorized === true;
}
