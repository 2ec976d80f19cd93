export interface ReconnectOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  backoffMultiplier: number;
  /** 0..1: the delay varies by ± this fraction. */
  jitterFactor: number;
  /** -1 retries forever. */
  maxRetries: number;
}

export const DEFAULT_RECONNECT: ReconnectOptions = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  backoffMultiplier: 2,
  jitterFactor: 0.3,
  maxRetries: -1,
};

/** Delay before reconnect attempt `attempt` (0-based): exponential, capped, with jitter. */
export function reconnectDelay(options: ReconnectOptions, attempt: number, random = Math.random): number {
  const base = Math.min(options.initialDelayMs * options.backoffMultiplier ** attempt, options.maxDelayMs);
  return Math.max(0, Math.floor(base * (1 + options.jitterFactor * (2 * random() - 1))));
}
