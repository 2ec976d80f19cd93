import type { Settlement } from '../../adapters/queue/types.js';

/** How a queue's failed messages are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt: a message is tried at most `maxRetries + 1` times, then dead. */
  maxRetries: number;
  backoffType: 'exponential' | 'linear' | 'fixed';
  /** The wait before the first retry. */
  backoffMs: number;
  /** No wait is longer than this. */
  backoffMaxMs: number;
}

/**
 * The wait before retry number `retry` (1 = the first retry): `backoff_ms` × 2^(retry−1) (exponential),
 * × retry (linear) or as is (fixed), capped at `backoff_max_ms`, less a random part of up to a fifth
 * so that messages that failed together do not all come back at the same moment.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const base =
    policy.backoffType === 'fixed'
      ? policy.backoffMs
      : policy.backoffType === 'linear'
        ? policy.backoffMs * retry
        : policy.backoffMs * 2 ** Math.min(retry - 1, 52);
  const capped = Math.min(base, policy.backoffMaxMs);
  return Math.round(capped * (1 - 0.2 * random()));
}

/** What becomes of a message whose attempt number `attempt` (1 = first) failed with `error`. */
export function settleFailure(policy: RetryPolicy, attempt: number, error: string): Settlement {
  if (attempt > policy.maxRetries) return { type: 'dead', error };
  return { type: 'retry', delayMs: backoffDelay(policy, attempt), error };
}
