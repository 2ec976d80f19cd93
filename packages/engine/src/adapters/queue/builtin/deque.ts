/** A double-ended queue on a ring buffer: O(1) push and shift at both ends, growing by doubling. */
export class Deque<T> {
  private items: (T | undefined)[] = new Array(16);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  unshift(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    return item;
  }

  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  /** Removes the first item `match` accepts (O(n)); true when one was removed. */
  removeFirst(match: (item: T) => boolean): boolean {
    const all = this.toArray();
    const at = all.findIndex(match);
    if (at < 0) return false;
    all.splice(at, 1);
    this.items = new Array(16);
    this.head = 0;
    this.count = 0;
    for (const item of all) this.push(item);
    return true;
  }

  /** Calls `visit` with each item, first to last, without copying them out. */
  forEach(visit: (item: T) => void): void {
    for (let i = 0; i < this.count; i++) visit(this.items[(this.head + i) & (this.items.length - 1)] as T);
  }

  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.items[(this.head + i) & (this.items.length - 1)] as T);
    return out;
  }

  private grow(): void {
    const next: (T | undefined)[] = new Array(this.items.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) & (this.items.length - 1)];
    this.items = next;
    this.head = 0;
  }
}
