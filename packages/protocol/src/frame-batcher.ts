/** What a batcher needs of a socket: Node's `net.Socket` (cork counts nest, as ws's own corks do). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Frames written in one go at most: a larger burst leaves in parts, so the peer starts on it early. */
export const FLUSH_EVERY = 16;

/**
 * Coalesces the frames written to one bridge socket into few writes without holding them back a turn
 * of the event loop when there is no load:
 *
 * - the first burst of a turn (the frames written while handling one incoming chunk, and the promise
 *   callbacks it set off) is corked and leaves on a microtask, i.e. at once after that handling;
 * - any burst after that in the same turn means load (many sockets with news at once): it stays corked
 *   until the end of the turn (setImmediate, after the I/O callbacks), so those frames share one write;
 * - a burst of FLUSH_EVERY frames leaves at once, whatever the turn.
 *
 * Order is the order of `corked()` calls: frames are only ever held, never reordered.
 */
export class FrameBatcher {
  private corked = false;
  private batched = 0;
  /** A flush happened this turn: the end-of-turn flush is scheduled and later bursts wait for it. */
  private busyTurn = false;

  /** @param afterFlush runs after each flush that was not a partial one (e.g. to judge back-pressure). */
  constructor(
    private readonly socket: Corkable,
    private readonly afterFlush?: () => void,
  ) {}

  /** Call before writing a frame to the socket, then `afterWrite()` after. */
  beforeWrite(): void {
    if (this.corked) return;
    this.corked = true;
    this.batched = 0;
    this.socket.cork();
    if (!this.busyTurn) queueMicrotask(this.flushBurst);
  }

  afterWrite(): void {
    if (++this.batched >= FLUSH_EVERY) {
      this.batched = 0;
      this.socket.uncork();
      this.socket.cork();
    }
  }

  private flush(): void {
    if (!this.corked) return;
    this.corked = false;
    this.batched = 0;
    this.socket.uncork();
    this.afterFlush?.();
  }

  private readonly flushBurst = () => {
    this.flush();
    if (!this.busyTurn) {
      this.busyTurn = true;
      setImmediate(this.endTurn);
    }
  };

  private readonly endTurn = () => {
    this.busyTurn = false;
    this.flush();
  };
}
