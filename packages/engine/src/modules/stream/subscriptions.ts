/** Something that receives frames (a client connection). */
export interface Subscriber {
  /** Sends a frame (UTF-8 text); false when the connection could not take it (closed, or dropped for being slow). */
  send(frame: Buffer): boolean;
}

/** Who listens to one group: to all of it, or to single items. Counts, as one connection may subscribe twice. */
interface GroupSubscribers {
  whole: Map<Subscriber, number>;
  items: Map<string, Map<Subscriber, number>>;
}

/**
 * The subscriptions of every connection of this engine, by stream group, so that a frame reaches the
 * connections that asked for it without looking at the others, and each of them once, however many
 * of its subscriptions match (a group subscription and an item subscription of the same group, say).
 */
export class SubscriptionIndex {
  private readonly groups = new Map<string, GroupSubscribers>();
  private total = 0;

  /** Subscriptions held, over all connections. */
  get size(): number {
    return this.total;
  }

  add(subscriber: Subscriber, stream: string, group: string, item: string | null): void {
    const key = groupKey(stream, group);
    const entry = this.groups.get(key) ?? { whole: new Map(), items: new Map() };
    this.groups.set(key, entry);
    let counts = entry.whole;
    if (item !== null) {
      const byItem = entry.items.get(item) ?? new Map<Subscriber, number>();
      entry.items.set(item, byItem);
      counts = byItem;
    }
    counts.set(subscriber, (counts.get(subscriber) ?? 0) + 1);
    this.total++;
  }

  remove(subscriber: Subscriber, stream: string, group: string, item: string | null): void {
    const key = groupKey(stream, group);
    const entry = this.groups.get(key);
    const counts = item === null ? entry?.whole : entry?.items.get(item);
    const count = counts?.get(subscriber);
    if (!entry || !counts || count === undefined) return;
    if (count > 1) counts.set(subscriber, count - 1);
    else counts.delete(subscriber);
    this.total--;
    if (item !== null && counts.size === 0) entry.items.delete(item);
    if (entry.whole.size === 0 && entry.items.size === 0) this.groups.delete(key);
  }

  /** Whether any connection listens to the group (or to an item of it). */
  listens(stream: string, group: string): boolean {
    return this.groups.has(groupKey(stream, group));
  }

  /**
   * Sends `text` once to every connection subscribed to the group, or to item `id` of it (encoded once for
   * all of them). A frame with no item (a group-wide custom event) reaches group subscriptions only.
   * Returns how many connections took it and its size in bytes.
   */
  deliver(stream: string, group: string, id: string | null, text: string): { sent: number; bytes: number } {
    const entry = this.groups.get(groupKey(stream, group));
    if (!entry) return { sent: 0, bytes: 0 };
    const frame = Buffer.from(text);
    let sent = 0;
    for (const subscriber of entry.whole.keys()) if (subscriber.send(frame)) sent++;
    const byItem = id === null ? undefined : entry.items.get(id);
    if (byItem) {
      for (const subscriber of byItem.keys()) {
        if (!entry.whole.has(subscriber) && subscriber.send(frame)) sent++;
      }
    }
    return { sent, bytes: frame.length };
  }
}

function groupKey(stream: string, group: string): string {
  return `${stream}\u0000${group}`;
}
