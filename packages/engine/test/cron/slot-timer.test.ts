/**
 * SlotTimer (src/modules/cron/slot-timer.ts): the due times of every cron job on one min-heap and one
 * setTimeout. Run on vitest's fake timers, which also move Date.now, so the clock is the test's.
 *
 * SlotTimer is not part of the package's public entry, so this file imports the built module (dist/, the
 * same copy `@flint/engine` loads; run `npx tsc -b` first).
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { SlotTimer } from '../../dist/modules/cron/slot-timer.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const MAX_DELAY_MS = 2 ** 31 - 1;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});

afterEach(() => {
  vi.useRealTimers();
});

/** A timer recording what fired: the item, its due time and the clock when it fired. */
function recordingTimer() {
  const fired: { item: string; at: number; now: number }[] = [];
  const timer = new SlotTimer<string>(
    (item, at) => fired.push({ item, at, now: Date.now() }),
    () => Date.now(),
  );
  return { timer, fired, items: () => fired.map((f) => f.item) };
}

describe('SlotTimer', () => {
  test('fires items in time order, each when its time comes, with its due time', () => {
    const { timer, fired, items } = recordingTimer();
    timer.add(T0 + 300, 'c');
    timer.add(T0 + 100, 'a');
    timer.add(T0 + 500, 'e');
    timer.add(T0 + 200, 'b');
    timer.add(T0 + 400, 'd');
    expect(timer.size).toBe(5);

    vi.advanceTimersByTime(99);
    expect(items()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(items()).toEqual(['a']);
    vi.advanceTimersByTime(250);
    expect(items()).toEqual(['a', 'b', 'c']);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([
      { item: 'a', at: T0 + 100, now: T0 + 100 },
      { item: 'b', at: T0 + 200, now: T0 + 200 },
      { item: 'c', at: T0 + 300, now: T0 + 300 },
      { item: 'd', at: T0 + 400, now: T0 + 400 },
      { item: 'e', at: T0 + 500, now: T0 + 500 },
    ]);
    expect(timer.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('many items in random order come out sorted', () => {
    const { timer, fired } = recordingTimer();
    const times = Array.from({ length: 200 }, (_, i) => T0 + 1 + ((i * 7919) % 1000));
    for (const [i, t] of times.entries()) timer.add(t, `item${i}`);
    vi.advanceTimersByTime(1001);
    expect(fired).toHaveLength(200);
    const ats = fired.map((f) => f.at);
    expect(ats).toEqual([...times].sort((a, b) => a - b));
    for (const f of fired) expect(f.now).toBe(f.at);
  });

  test('several items due at the same time all fire, in one turn', () => {
    const { timer, fired, items } = recordingTimer();
    for (const name of ['x', 'y', 'z', 'w']) timer.add(T0 + 1000, name);
    timer.add(T0 + 2000, 'later');
    vi.advanceTimersByTime(1000);
    expect(items().sort()).toEqual(['w', 'x', 'y', 'z']);
    expect(new Set(fired.map((f) => f.at))).toEqual(new Set([T0 + 1000]));
    expect(timer.size).toBe(1);
  });

  test('an item whose time has already passed fires on the next turn', () => {
    const { timer, fired } = recordingTimer();
    timer.add(T0 - 5000, 'overdue');
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(0);
    expect(fired).toEqual([{ item: 'overdue', at: T0 - 5000, now: T0 }]);
  });

  test('cancel removes an item: in the middle, at the head, twice, or after it fired', () => {
    const { timer, items } = recordingTimer();
    const a = timer.add(T0 + 100, 'a');
    timer.add(T0 + 200, 'b');
    const c = timer.add(T0 + 300, 'c');
    timer.add(T0 + 400, 'd');
    c.cancel();
    a.cancel(); // the head: the timer moves on to b
    a.cancel();
    expect(timer.size).toBe(2);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(150);
    expect(items()).toEqual([]);
    vi.advanceTimersByTime(50);
    expect(items()).toEqual(['b']);
    vi.advanceTimersByTime(1000);
    expect(items()).toEqual(['b', 'd']);
    c.cancel();
    expect(timer.size).toBe(0);
  });

  test('cancelling the last item leaves no timer pending', () => {
    const { timer, items } = recordingTimer();
    const only = timer.add(T0 + 100, 'only');
    expect(vi.getTimerCount()).toBe(1);
    only.cancel();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(items()).toEqual([]);
  });

  test('cancel keeps the heap in order for the rest', () => {
    const { timer, fired } = recordingTimer();
    const handles = Array.from({ length: 100 }, (_, i) => timer.add(T0 + 1 + ((i * 37) % 100), `n${i}`));
    for (const [i, h] of handles.entries()) if (i % 3 === 0) h.cancel();
    vi.advanceTimersByTime(101);
    expect(fired.map((f) => f.item).sort()).toEqual(
      handles
        .map((_, i) => `n${i}`)
        .filter((_, i) => i % 3 !== 0)
        .sort(),
    );
    const ats = fired.map((f) => f.at);
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
  });

  test('items added while firing are scheduled (the way a cron job plans its next slot)', () => {
    const fired: { item: string; at: number }[] = [];
    const timer: SlotTimer<string> = new SlotTimer<string>(
      (item, at) => {
        fired.push({ item, at });
        if (item === 'tick' && fired.length < 4) timer.add(at + 1000, 'tick');
        if (item === 'tick' && fired.length === 1) timer.add(at, 'same-time');
      },
      () => Date.now(),
    );
    timer.add(T0 + 1000, 'tick');
    vi.advanceTimersToNextTimer();
    expect(Date.now()).toBe(T0 + 1000);
    expect(fired).toEqual([{ item: 'tick', at: T0 + 1000 }]);
    expect(vi.getTimerCount()).toBe(1);
    // Added while firing with a time already come: the next turn, not the same one.
    vi.advanceTimersToNextTimer();
    expect(fired.map((f) => f.item)).toEqual(['tick', 'same-time']);
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([
      { item: 'tick', at: T0 + 1000 },
      { item: 'same-time', at: T0 + 1000 },
      { item: 'tick', at: T0 + 2000 },
      { item: 'tick', at: T0 + 3000 },
    ]);
    expect(timer.size).toBe(0);
  });

  test('an item cancelled by the firing of another due at the same time does not fire', () => {
    const fired: string[] = [];
    const handles = new Map<string, { cancel(): void }>();
    const timer = new SlotTimer<string>(
      (item) => {
        fired.push(item);
        for (const [name, h] of handles) if (name !== item) h.cancel();
      },
      () => Date.now(),
    );
    for (const name of ['p', 'q', 'r']) handles.set(name, timer.add(T0 + 100, name));
    vi.advanceTimersByTime(100);
    expect(fired).toHaveLength(1);
  });

  test('stop() while firing: the rest of the due items do not fire', () => {
    const fired: string[] = [];
    const timer = new SlotTimer<string>(
      (item) => {
        fired.push(item);
        timer.stop();
      },
      () => Date.now(),
    );
    for (const name of ['p', 'q', 'r']) timer.add(T0 + 100, name);
    timer.add(T0 + 200, 's');
    vi.advanceTimersByTime(1000);
    expect(fired).toHaveLength(1);
    expect(timer.size).toBe(0);
  });

  test('one underlying timer however many items, re-armed only for an earlier head', () => {
    const { timer, items } = recordingTimer();
    for (let i = 0; i < 1000; i++) timer.add(T0 + 10_000 + i, `i${i}`);
    expect(vi.getTimerCount()).toBe(1);
    timer.add(T0 + 50, 'early');
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(50);
    expect(items()).toEqual(['early']);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000 - 50 + 499);
    expect(items()).toHaveLength(501);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(items()).toHaveLength(1001);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('a due time beyond 2^31-1 ms away does not fire early, and fires when it comes', () => {
    const { timer, fired } = recordingTimer();
    const far = T0 + MAX_DELAY_MS + 5000;
    timer.add(far, 'far');
    expect(vi.getTimerCount()).toBe(1);
    // setTimeout cannot wait that long at once: its first turn comes at 2^31-1 ms, and nothing fires.
    vi.advanceTimersByTime(MAX_DELAY_MS);
    expect(fired).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(4999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([{ item: 'far', at: far, now: far }]);
  });

  test('an item far in the future does not hold back a nearer one added later', () => {
    const { timer, items } = recordingTimer();
    timer.add(T0 + 3 * MAX_DELAY_MS, 'far');
    timer.add(T0 + 10, 'near');
    vi.advanceTimersByTime(10);
    expect(items()).toEqual(['near']);
    expect(timer.size).toBe(1);
  });

  test('stop() clears every item and the timer; the handles do nothing after; it can be used again', () => {
    const { timer, items } = recordingTimer();
    const a = timer.add(T0 + 100, 'a');
    timer.add(T0 + 200, 'b');
    timer.stop();
    expect(timer.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    a.cancel();
    vi.advanceTimersByTime(1000);
    expect(items()).toEqual([]);
    timer.add(Date.now() + 100, 'again');
    vi.advanceTimersByTime(100);
    expect(items()).toEqual(['again']);
  });
});
