/** setTimeout's longest delay; a later due time is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

interface Entry<T> {
  at: number;
  item: T;
  /** Position in the heap; -1 once removed. */
  index: number;
  /** Cancelled, or the timer stopped: not fired, even when already taken off as due. */
  cancelled: boolean;
}

export interface TimerHandle {
  cancel(): void;
}

/**
 * Due times of every job on one timer: a binary min-heap by time, and a single setTimeout for its head.
 * `fire` gets every item whose time has come, in time order; an item cancelled (or the timer stopped) by an
 * earlier `fire` of the same turn is not fired.
 */
export class SlotTimer<T> {
  private readonly heap: Entry<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  /** Taking the due entries off: the timer is armed once, after. */
  private draining = false;
  /** The due entries being fired. */
  private firing: Entry<T>[] = [];

  constructor(
    private readonly fire: (item: T, at: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.heap.length;
  }

  add(at: number, item: T): TimerHandle {
    const entry: Entry<T> = { at, item, index: this.heap.length, cancelled: false };
    this.heap.push(entry);
    this.up(entry.index);
    if (entry.index === 0) this.arm();
    return {
      cancel: () => {
        entry.cancelled = true;
        this.remove(entry);
      },
    };
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    for (const e of this.heap) e.index = -1;
    this.heap.length = 0;
    for (const e of this.firing) e.cancelled = true;
  }

  private remove(entry: Entry<T>): void {
    const i = entry.index;
    if (i < 0) return;
    entry.index = -1;
    const last = this.heap.pop() as Entry<T>;
    if (i < this.heap.length) {
      this.heap[i] = last;
      last.index = i;
      this.down(i);
      this.up(last.index);
    }
    if (i === 0 && !this.draining) this.arm();
  }

  private arm(): void {
    const head = this.heap[0];
    if (!head) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.armedAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.timer && this.armedAt === head.at) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = head.at;
    this.timer = setTimeout(this.run, Math.min(MAX_DELAY_MS, Math.max(0, head.at - this.now())));
    this.timer.unref?.();
  }

  private readonly run = (): void => {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    const due: Entry<T>[] = [];
    this.draining = true;
    while (this.heap.length > 0 && (this.heap[0] as Entry<T>).at <= now) {
      const head = this.heap[0] as Entry<T>;
      this.remove(head);
      due.push(head);
    }
    this.draining = false;
    this.arm();
    this.firing = due;
    try {
      for (const e of due) if (!e.cancelled) this.fire(e.item, e.at);
    } finally {
      this.firing = [];
    }
  };

  private up(i: number): void {
    const heap = this.heap;
    const entry = heap[i] as Entry<T>;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Entry<T>;
      if (p.at <= entry.at) break;
      heap[i] = p;
      p.index = i;
      i = parent;
    }
    heap[i] = entry;
    entry.index = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const entry = heap[i] as Entry<T>;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && (heap[r] as Entry<T>).at < (heap[l] as Entry<T>).at ? r : l;
      const child = heap[c] as Entry<T>;
      if (child.at >= entry.at) break;
      heap[i] = child;
      child.index = i;
      i = c;
    }
    heap[i] = entry;
    entry.index = i;
  }
}
