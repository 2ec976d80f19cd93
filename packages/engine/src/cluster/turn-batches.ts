/**
 * Requests and replies gathered per subject while the work at hand runs (until a microtask), then sent
 * as one message of the messaging system: with many calls in flight between two engines, the server and both clients handle
 * one message where they handled dozens (measured by bench/cluster).
 *
 * A packed message is a run of items, each its number (4 bytes), its length (4 bytes) and its bytes.
 */
export interface BatchItem {
  id: number;
  data: Uint8Array;
}

/** The bytes an item takes besides its data. */
export const ITEM_OVERHEAD = 8;

export function packItems(items: readonly BatchItem[]): Uint8Array {
  let size = 0;
  for (const item of items) size += ITEM_OVERHEAD + item.data.byteLength;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const { id, data } of items) {
    view.setUint32(at, id);
    view.setUint32(at + 4, data.byteLength);
    out.set(data, at + ITEM_OVERHEAD);
    at += ITEM_OVERHEAD + data.byteLength;
  }
  return out;
}

/** The items of a packed message (views into it), or undefined when it is not one. */
export function unpackItems(bytes: Uint8Array): BatchItem[] | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const items: BatchItem[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    if (at + ITEM_OVERHEAD > bytes.byteLength) return undefined;
    const id = view.getUint32(at);
    const length = view.getUint32(at + 4);
    const end = at + ITEM_OVERHEAD + length;
    if (end > bytes.byteLength) return undefined;
    items.push({ id, data: bytes.subarray(at + ITEM_OVERHEAD, end) });
    at = end;
  }
  return items;
}

/**
 * Items waiting for a microtask (the work that produced them is done by then), per subject. A subject's items are handed to
 * `send` together, in the order they came; a batch that would grow over `maxBytes` is sent first.
 */
export class TurnBatches {
  private readonly open = new Map<string, { items: BatchItem[]; bytes: number }>();
  private scheduled = false;

  constructor(
    private readonly send: (subject: string, items: BatchItem[]) => void,
    /** The most bytes one packed message may take. */
    private readonly maxBytes: () => number,
  ) {}

  add(subject: string, id: number, data: Uint8Array): void {
    const size = ITEM_OVERHEAD + data.byteLength;
    let batch = this.open.get(subject);
    if (batch && batch.bytes + size > this.maxBytes()) {
      this.open.delete(subject);
      this.send(subject, batch.items);
      batch = undefined;
    }
    if (!batch) {
      batch = { items: [], bytes: 0 };
      this.open.set(subject, batch);
    }
    batch.items.push({ id, data });
    batch.bytes += size;
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flush);
    }
  }

  /** Sends every batch now. */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.open.size === 0) return;
    const batches = [...this.open];
    this.open.clear();
    for (const [subject, batch] of batches) this.send(subject, batch.items);
  };
}
