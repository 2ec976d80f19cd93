import type { Delivery, Settlement } from '../../adapters/queue/types.js';
import type { ModuleContext } from '../../core/module-api.js';
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
  const options: FireOptions = {
    logger: ctx.logger,
    timeoutMs: settings.visibilityTimeoutMs,
    traceparent: delivery.traceparent,
    baggage: delivery.baggage,
    // Built only when a line is logged: most deliveries log nothing.
    logFields: () => ({ ...target.logFields, message_id: delivery.id, attempt: delivery.attempt }),
    spanName: `process ${target.spanTarget}`,
    attributes: {
      'messaging.system': 'flint',
      'messaging.operation.type': 'process',
      'messaging.destination.name': target.spanTarget,
      'messaging.message.id': delivery.id,
      'flint.queue.attempt': delivery.attempt,
    },
  };
  const finish = (outcome: FireOutcome) => {
    try {
      settleOutcome(ctx, target, delivery, outcome, settle);
    } catch (err) {
      settle(settleFailure(settings, delivery.attempt, `internal_error: ${errorMessage(err)}`));
    } finally {
      done();
    }
  };
  // A callback rather than a promise chain: this runs for every message. An outcome known at once (no
  // such function) is handled on a microtask, as the promise did: an adapter that delivers the next
  // message from within a settlement never does so on an ever deeper stack. What goes wrong in here
  // (never the handler's failure, which is an outcome) is a failed attempt too.
  let returned = false;
  try {
    fireTriggerWith(ctx, target.trigger, delivery.data, options, (outcome) => {
      if (returned) finish(outcome);
      else queueMicrotask(() => finish(outcome));
    });
  } catch (err) {
    const error: FireOutcome = { status: 'failed', stage: 'function', error: { code: 'internal_error', message: errorMessage(err) } };
    queueMicrotask(() => finish(error));
  }
  returned = true;
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

/** Settles a delivery by its outcome: ack, or a failed attempt (retried later, or dead, which is logged). */
function settleOutcome(ctx: ModuleContext, target: DeliveryTarget, delivery: Delivery, outcome: FireOutcome, settle: (s: Settlement) => void): void {
  const { settings, counters } = target;
  if (outcome.status !== 'failed') {
    counters.handled.add();
    return settle({ type: 'ack' });
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
