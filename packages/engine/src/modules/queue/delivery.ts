import type { Delivery, Settlement } from '../../adapters/queue/types.js';
import type { Logger } from '../../core/logger.js';
import { type AttributeValue, type FiringOptions, type ModuleContext, PreparedJson } from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';
import { burstLogOf, floodLimit } from '../../lib/log-burst.js';
import { type FireOptions, type FireOutcome, type FiringTrigger, fireTriggerWith } from '../../lib/triggers.js';
import { settleFailure } from './policy.js';
import type { QueueCounters } from './rates.js';
import type { DeliverySettings } from './subscriber-config.js';

/** What runs one message: the trigger it fires and how failures are handled. */
export interface DeliveryTarget {
  trigger: FiringTrigger;
  settings: DeliverySettings;
  counters: QueueCounters;
  /** For log lines: `{topic}` or `{queue}`. */
  logFields: Record<string, unknown>;
  /** The topic or named queue, for the span of each delivery. */
  spanTarget: string;
}

/**
 * Handles one delivery: waits out the subscriber's own delay, runs the condition (a literal `false`
 * acks and skips) and the function with exactly the message's data and its publisher's trace context,
 * within the visibility timeout. A failure (of the condition too) is retried with back-off, then dead.
 */
export function handleDelivery(ctx: ModuleContext, target: DeliveryTarget, delivery: Delivery, settle: (s: Settlement) => void, done: () => void): void {
  const { settings } = target;
  const wait = delivery.publishedAt + settings.delayMs - Date.now();
  if (settings.delayMs > 0 && wait > 0) {
    settle({ type: 'defer', delayMs: wait });
    return done();
  }
  const run = new DeliveryRun(ctx, target, delivery, settle, done);
  try {
    // Data the backend holds as JSON text goes into the call's frame as it is.
    const data = delivery.dataJson === undefined ? delivery.data : new PreparedJson(delivery.dataJson);
    fireTriggerWith(ctx, target.trigger, data, run, run.end);
  } catch (err) {
    run.end({ status: 'failed', stage: 'function', error: { code: 'internal_error', message: errorMessage(err) } });
  }
  run.returned = true;
}

/**
 * One delivery being handled: the options of its firing, with the log line's fields and the span's name
 * and attributes made only when read (a failure, a tracer), and its end. One object per message in hand
 * (a callback rather than a promise chain: this runs for every message).
 */
class DeliveryRun implements FireOptions, FiringOptions {
  /** fireTriggerWith has returned (see `end`). */
  returned = false;
  private over = false;

  constructor(
    private readonly ctx: ModuleContext,
    private readonly target: DeliveryTarget,
    private readonly delivery: Delivery,
    private readonly settle: (s: Settlement) => void,
    private readonly done: () => void,
  ) {}

  /**
   * An outcome known at once (no such function) is handled on a microtask, as a promise would: an adapter
   * that delivers the next message from within a settlement never does so on an ever deeper stack.
   */
  readonly end = (outcome: FireOutcome): void => {
    if (this.over) return;
    this.over = true;
    if (this.returned) this.finish(outcome);
    else queueMicrotask(() => this.finish(outcome));
  };

  get logger(): Logger {
    return this.ctx.logger;
  }

  get timeoutMs(): number {
    return this.target.settings.visibilityTimeoutMs;
  }

  get traceparent(): string | undefined {
    return this.delivery.traceparent;
  }

  get baggage(): string | undefined {
    return this.delivery.baggage;
  }

  get firing(): FiringOptions {
    return this;
  }

  get name(): string {
    return `process ${this.target.spanTarget}`;
  }

  get logFields(): Record<string, unknown> {
    return { ...this.target.logFields, message_id: this.delivery.id, attempt: this.delivery.attempt };
  }

  get attributes(): Record<string, AttributeValue> {
    return {
      'messaging.system': 'flint',
      'messaging.operation.type': 'process',
      'messaging.destination.name': this.target.spanTarget,
      'messaging.message.id': this.delivery.id,
      'flint.queue.attempt': this.delivery.attempt,
    };
  }

  /** What goes wrong in here (never the handler's failure, which is an outcome) is a failed attempt too. */
  private finish(outcome: FireOutcome): void {
    try {
      settleOutcome(this.ctx, this.target, this.delivery, outcome, this.settle);
    } catch (err) {
      this.settle(settleFailure(this.target.settings, this.delivery.attempt, `internal_error: ${errorMessage(err)}`));
    } finally {
      this.done();
    }
  }
}

/**
 * Dead-letter lines of the module: ten a second in full, then one line a second counting the rest per
 * function (a handler failing every message would write one line each); the dead letters themselves
 * keep every message, its error and attempts (`engine::queue::dlq_messages`).
 */
const DEAD_LETTER_LOG = floodLimit(
  'error',
  'functions',
  (n, detail) => `${n.toLocaleString('en-US')} more message${n === 1 ? '' : 's'} moved to the dead letters in the last second (${detail})`,
);

const ACK: Settlement = Object.freeze({ type: 'ack' });

/** Settles a delivery by its outcome: ack, or a failed attempt (retried later, or dead, which is logged). */
function settleOutcome(ctx: ModuleContext, target: DeliveryTarget, delivery: Delivery, outcome: FireOutcome, settle: (s: Settlement) => void): void {
  const { settings, counters } = target;
  if (outcome.status !== 'failed') {
    counters.handled.add();
    return settle(ACK);
  }
  counters.failed.add();
  const error = `${outcome.error.code}: ${outcome.error.message}`;
  const settlement = settleFailure(settings, delivery.attempt, error);
  if (settlement.type === 'dead') {
    counters.dead.add();
    burstLogOf(ctx.logger, DEAD_LETTER_LOG).add(target.trigger.function_id, () =>
      ctx.logger.error(
        { ...target.logFields, message_id: delivery.id, attempt: delivery.attempt, function_id: target.trigger.function_id, code: outcome.error.code },
        `message ${delivery.id} moved to the dead letters after ${delivery.attempt} attempt${delivery.attempt === 1 ? '' : 's'}: ${error}`,
      ),
    );
  }
  settle(settlement);
}
