/**
 * The clean-up registry: helpers that start something (an engine, a worker, a raw client, a child
 * process) remember how to undo it with `track`, and `cleanup()` (call it in afterEach) undoes it all.
 */
import { within } from './util.js';

const disposers: (() => unknown)[] = [];

/** Remembers something to undo in `cleanup()` (run in reverse order). */
export function track(dispose: () => unknown): void {
  disposers.push(dispose);
}

/** Runs every tracked clean-up step, newest first; each gets 5 s. Rethrows the first failure after running them all. */
export async function cleanup(): Promise<void> {
  const errors: unknown[] = [];
  while (disposers.length > 0) {
    const dispose = disposers.pop() as () => unknown;
    try {
      await within(Promise.resolve(dispose()), 5000, 'clean-up step');
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}
