// Firing samples of bench/cron, kept per slot by the process that handles the firings (a Flint worker
// child, or the croner baseline): for each call, ms from its slot to its handler's start (this process's
// Date.now(), the clock the engine plans slots with) and, for Flint, ms from the slot to the payload's
// actual_time (the engine's own note of when it fired).

export function createSlotRecorder() {
  /** slot (ms since the epoch) → { skew: number[], actual: number[] } */
  const slots = new Map();
  return {
    record(slot, startedAt, actualAt) {
      let s = slots.get(slot);
      if (!s) {
        s = { skew: [], actual: [] };
        slots.set(slot, s);
      }
      s.skew.push(startedAt - slot);
      if (actualAt !== undefined) s.actual.push(actualAt - slot);
    },
    /** IPC handlers: `count` { slot } → { count } (calls of that slot so far); `samples` { from, to } → { slots: [{ slot, skew, actual }] } for slots in [from, to). */
    handlers: {
      count: ({ slot }) => ({ count: slots.get(slot)?.skew.length ?? 0 }),
      samples: ({ from, to }) => ({
        slots: [...slots].filter(([slot]) => slot >= from && slot < to).map(([slot, s]) => ({ slot, skew: s.skew, actual: s.actual })),
      }),
    },
  };
}
