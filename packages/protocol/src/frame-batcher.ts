/** What a batcher needs of a socket: Node's `net.Socket` (cork counts nest, as ws's own corks do). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Frames written in one go at most: a larger burst leaves in parts, so the peer starts on it early. */
export const FLUSH_EVERY = 16;

/**
 * A turn that wrote this many frames or more is heavy: the next turn's first frame waits for its burst
 * instead of going ahead (`firstFrameAhead`: an extra write per turn pays off only while frames are few).
 */
export const HEAVY_TURN_FRAMES = 4 * FLUSH_EVERY;

export interface FrameBatcherOptions {
  /** Runs after each flush that was not a partial one, and after a frame sent ahead (e.g. to judge back-pressure). */
  afterFlush?: () => void;
  /** Writes the first frame of an idle turn on its own, as it comes (see FrameBatcher). */
  firstFrameAhead?: boolean;
}

/**
 * Coalesces the frames written to one bridge socket into few writes without holding them back to the
 * end of the event-loop turn when there is no load. A burst is what one piece of handling writes: the
 * frames sent while handling one incoming chunk, and the promise callbacks that handling set off.
 *
 * - Idle (the last turn that wrote had one burst at most): a burst is corked and leaves on a
 *   microtask, i.e. at once after its handling, as one write. With `firstFrameAhead` (the engine's
 *   connections), the first frame of an idle turn is written on its own as it comes, unless the last
 *   turn that wrote was heavy (HEAVY_TURN_FRAMES frames or more): the peer starts on it while this
 *   process handles the rest. Were the whole burst held at every hop, the calls in flight would travel
 *   together as one convoy and the processes on the way would take turns instead of working at once
 *   (bench/README.md, how frames are batched).
 * - A second burst in the same turn means load (news on many sockets at once): it stays corked until
 *   the end of the turn (setImmediate, after the I/O callbacks), and so do all the bursts of the
 *   following turns, sharing one write per turn, until a turn has one burst only.
 * - A burst of FLUSH_EVERY frames leaves at once, whatever the turn.
 *
 * Frames are only ever held, never reordered.
 */
export class FrameBatcher {
  private corked = false;
  /** The frame being written went out on its own (the first of an idle turn). */
  private through = false;
  private batched = 0;
  /** Frames written in the current turn, and in the last turn that wrote. */
  private turnFrames = 0;
  private lastTurnFrames = 0;
  /** The end-of-turn flush is scheduled: frames written until then wait for it. */
  private turnScheduled = false;
  /** Bursts written in the current turn; a write with no burst open starts one. */
  private bursts = 0;
  private inBurst = false;
  /** Under load: bursts wait for the end of the turn instead of leaving on a microtask. */
  private loaded = false;

  private readonly afterFlush: (() => void) | undefined;
  private readonly firstFrameAhead: boolean;

  constructor(
    private readonly socket: Corkable,
    options: FrameBatcherOptions = {},
  ) {
    this.afterFlush = options.afterFlush;
    this.firstFrameAhead = options.firstFrameAhead === true;
  }

  /** Call before writing a frame to the socket, then `afterWrite()` after. */
  beforeWrite(): void {
    if (!this.inBurst) {
      this.inBurst = true;
      this.bursts++;
      queueMicrotask(this.endBurst);
      if (this.firstFrameAhead && !this.corked && !this.turnScheduled && !this.loaded && this.lastTurnFrames < HEAVY_TURN_FRAMES) {
        // The first frame of an idle turn: written as it comes. The turn's end is scheduled all the
        // same, so that later bursts in this turn wait for it and the turn is judged.
        this.through = true;
        this.scheduleTurnEnd();
        return;
      }
    }
    if (this.corked) return;
    this.corked = true;
    this.batched = 0;
    this.socket.cork();
    // Later bursts of the turn wait for its end; the first leaves on a microtask (its first frame may
    // have gone ahead and scheduled the end already).
    if (this.turnScheduled && this.bursts > 1) return;
    if (this.loaded) this.scheduleTurnEnd();
    else queueMicrotask(this.flushBurst);
  }

  afterWrite(): void {
    this.turnFrames++;
    if (this.through) {
      this.through = false;
      this.afterFlush?.();
      return;
    }
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
    this.lastTurnFrames = this.turnFrames;
    this.turnFrames = 0;
    this.flush();
  };
}
