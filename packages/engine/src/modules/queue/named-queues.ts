import { FlintError } from '@flint/protocol';
import type { Consumer, QueueBackend } from '../../adapters/queue/types.js';
import type { ModuleContext, TraceContext } from '../../core/module-api.js';
import { groupText } from '../../lib/group-text.js';
import type { NamedQueueConfig } from './config.js';
import { handleDelivery } from './delivery.js';
import { namedQueue } from './names.js';
import type { CounterTable } from './rates.js';
import type { DeliverySettings } from './subscriber-config.js';

export function namedSettings(config: NamedQueueConfig): DeliverySettings {
  return {
    maxRetries: config.max_retries,
    backoffType: config.backoff_type,
    backoffMs: config.backoff_ms,
    backoffMaxMs: config.backoff_max_ms,
    concurrency: config.concurrency,
    visibilityTimeoutMs: config.visibility_timeout_ms,
    fifo: config.type === 'fifo',
    groupField: config.message_group_field,
    delayMs: 0,
  };
}

/**
 * Named function queues (`queue_configs`): the queue role of the engine. A call made with
 * `TriggerAction.Enqueue({queue})` is stored in the named queue with its function id and answered with
 * a receipt id; one consumer per queue calls each message's function with exactly its data. A missing
 * function fails at that point (retried, then dead) without holding up the other messages.
 */
export class NamedQueues {
  private readonly consumers: Consumer[] = [];
  private inFlight = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly ctx: ModuleContext,
    private readonly backend: QueueBackend,
    private readonly configs: Record<string, NamedQueueConfig>,
    private readonly counters: CounterTable,
  ) {}

  start(): void {
    for (const [name, config] of Object.entries(this.configs)) {
      const settings = namedSettings(config);
      const queue = namedQueue(name);
      const counters = this.counters.of(queue);
      this.consumers.push(
        this.backend.consume(
          queue,
          { concurrency: settings.concurrency, fifo: settings.fifo, visibilityTimeoutMs: settings.visibilityTimeoutMs },
          (delivery, settle) => {
            this.inFlight++;
            const trigger = { id: queue, type: 'enqueue', function_id: delivery.functionId ?? '' };
            handleDelivery(this.ctx, { trigger, settings, counters, logFields: { queue: name }, spanTarget: name }, delivery, settle, this.finished);
          },
        ),
      );
    }
    this.ctx.provideEnqueue((queue, functionId, data, trace) => this.enqueue(queue, functionId, data, trace));
  }

  /** Stores the call; resolves with its receipt id. Errors are `enqueue_error` with upstream's messages. */
  async enqueue(name: string, functionId: string, data: unknown, trace: TraceContext): Promise<string> {
    const config = this.configs[name];
    if (!config) throw new FlintError('enqueue_error', `Queue '${name}' not found`);
    let group: string | undefined;
    if (config.type === 'fifo') {
      const field = config.message_group_field as string;
      const record = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
      if (!(field in record)) throw new FlintError('enqueue_error', `FIFO queue '${name}' requires field '${field}' in data, but it was not found`);
      const value = record[field];
      if (value === null || value === undefined) throw new FlintError('enqueue_error', `FIFO queue '${name}': field '${field}' must not be null`);
      group = groupText(value);
    }
    const { id } = await this.backend.publish(namedQueue(name), { data, functionId, group, traceparent: trace.traceparent, baggage: trace.baggage });
    this.counters.of(namedQueue(name)).published.add();
    return id;
  }

  async drain(): Promise<void> {
    await Promise.all(this.consumers.splice(0).map((c) => c.stop()));
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private readonly finished = () => {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
  };
}
