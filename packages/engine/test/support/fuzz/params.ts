/**
 * fast-check parameters for the engine fuzz tests: a bounded number of runs, stopped after a time
 * limit whatever the count (so CI time stays bounded), seeded from `FUZZ_SEED` when it is set. On a
 * failure fast-check prints the seed and the path of the shrunk counterexample: `FUZZ_SEED=<seed>`
 * replays the file's properties with that seed.
 */
import fc from 'fast-check';

export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

export function fuzzParams<T>(numRuns: number, timeLimitMs: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> {
  return {
    numRuns,
    ...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }),
    ...extra,
    plugins: [fc.interruptAfterTimeLimit(timeLimitMs) as fc.Plugin<T>, ...(extra.plugins ?? [])],
  };
}

/**
 * Uncaught exceptions and unhandled rejections raised while `watch` is on. Vitest reports them too
 * (and fails the run); recording them here lets a property fail at the run that raised one, so
 * fast-check can shrink it to a minimal input.
 */
export class CrashWatch {
  readonly errors: unknown[] = [];
  private readonly record = (err: unknown) => {
    this.errors.push(err);
  };

  start(): void {
    process.on('uncaughtException', this.record);
    process.on('unhandledRejection', this.record);
  }

  stop(): void {
    process.off('uncaughtException', this.record);
    process.off('unhandledRejection', this.record);
  }

  /** Throws when anything was raised since the last call (and forgets it). */
  check(): void {
    const errors = this.errors.splice(0);
    if (errors.length === 0) return;
    const first = errors[0];
    throw new Error(`the engine raised ${errors.length} uncaught error(s): ${first instanceof Error ? (first.stack ?? first.message) : String(first)}`);
  }
}
