/** What a batcher needs of a socket: Node's `net.Socket` (cork counts nest, as ws's own corks do). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Frames written in one go at most: a larger burst leaves in parts, so the peer starts on it early. */
export const FLUSH_EVERY = 16;

/**
 * Coalesces the frames written to one bridge socket into few writes without holding them back to the
 * end of the event-loop turn when there is no load. A burst is what one piece of handling writes: the
 * frames sent while handling one incoming chunk, and the promise callbacks that handling set off.
 *
 * - Idle (the last turn that wrote had one burst at most): a burst is corked and leaves on a
 *   microtask, i.e. at once after its handling, as one write.
 * - A second burst in the same turn means load (news on many sockets at once): it stays corked until
 *   the end of the turn (setImmediate, after the I/O callbacks), and so do all the bursts of the
 *   following turns, sharing one write per turn, until a turn has one burst only.
 * - A burst of FLUSH_EVERY frames leaves at once, whatever the turn.
 *
 * Frames are only ever held, never reordered.
 */
export class FrameBatcher {
  private corked = false;
  private batched = 0;
  /** The end-of-turn flush is scheduled: frames written until then wait for it. */
  private turnScheduled = false;
  /** Bursts written in the current turn; a write with no burst open starts one. */
  private bursts = 0;
  private inBurst = false;
  /** Under load: bursts wait for the end of the turn instead of leaving on a microtask. */
  private loaded = false;

  /** @param afterFlush runs after each flush that was not a partial one (e.g. to judge back-pressure). */
  constructor(
    private readonly socket: Corkable,
    private readonly afterFlush?: () => void,
  ) {}

  /** Call before writing a frame to the socket, then `afterWrite()` after. */
  beforeWrite(): void {
    if (!this.inBurst) {
      this.inBurst = true;
      this.bursts++;
      queueMicrotask(this.endBurst);
    }
    if (this.corked) return;
    this.corked = true;
    this.batched = 0;
    this.socket.cork();
    if (this.turnScheduled) return;
    if (this.loaded) this.scheduleTurnEnd();
    else queueMicrotask(this.flushBurst);
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

  private scheduleTurnEnd(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.endTurn);
  }

  private readonly endBurst = () => {
    this.inBurst = false;
  };

  private readonly flushBurst = () => {
    this.flush();
    this.scheduleTurnEnd();
  };

  private readonly endTurn = () => {
    this.turnScheduled = false;
    this.loaded = this.bursts > 1;
    this.bursts = 0;
    this.flush();
  };
}
