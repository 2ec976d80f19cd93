/** A binary min-heap of items by due time (ms since the epoch), with one timer for the earliest. */
export class DueHeap<T extends { dueAt: number }> {
  private readonly heap: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  /** @param onDue called with every item whose time has come, in due order. */
  constructor(private readonly onDue: (item: T) => void) {}

  get size(): number {
    return this.heap.length;
  }

  values(): readonly T[] {
    return this.heap;
  }

  add(item: T): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = heap[parent] as T;
      if (above.dueAt <= item.dueAt) break;
      heap[i] = above;
      i = parent;
    }
    heap[i] = item;
    this.arm();
  }

  /** Removes the first item `match` accepts (O(n)); true when one was removed. */
  remove(match: (item: T) => boolean): boolean {
    const at = this.heap.findIndex(match);
    if (at < 0) return false;
    this.heap.splice(at, 1);
    const items = this.heap.splice(0);
    for (const item of items) this.add(item);
    this.arm();
    return true;
  }

  /** Removes and returns every item. */
  drain(): T[] {
    const items = this.heap.splice(0);
    this.disarm();
    return items;
  }

  stop(): void {
    this.disarm();
  }

  private pop(): T | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const top = heap[0] as T;
    const last = heap.pop() as T;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heap.length) break;
        const r = l + 1;
        const c = r < heap.length && (heap[r] as T).dueAt < (heap[l] as T).dueAt ? r : l;
        const child = heap[c] as T;
        if (child.dueAt >= last.dueAt) break;
        heap[i] = child;
        i = c;
      }
      heap[i] = last;
    }
    return top;
  }

  private arm(): void {
    const next = this.heap[0];
    if (!next) return this.disarm();
    if (this.timer && this.timerAt <= next.dueAt) return;
    this.disarm();
    this.timerAt = next.dueAt;
    this.timer = setTimeout(this.fire, Math.max(0, next.dueAt - Date.now()));
    this.timer.unref?.();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private readonly fire = () => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    while (this.heap.length > 0 && (this.heap[0] as T).dueAt <= now) this.onDue(this.pop() as T);
    this.arm();
  };
}
