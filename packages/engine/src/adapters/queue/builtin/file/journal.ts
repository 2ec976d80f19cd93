import { FlintError } from '@flint/protocol';
import type { GroupCommitLog } from '../../../shared/group-commit.js';
import type { DeadEntry, QueueJournal, StoredMessage } from '../memory-queue.js';
import { type BodyFile, PENDING } from './bodies.js';
import { deadFrame, deliveredFrame, discardedFrame, putFrame, removedFrame, rescheduledFrame, revivedFrame } from './records.js';

/**
 * Writes every change of the builtin queues to the log (records.ts). A new message's record carries
 * its data; once the record is on disk the message keeps only where (its data is dropped from memory).
 * Only `stored` waits on nothing and may throw (a failed log, data JSON cannot hold); the other
 * changes come from settles and timers and are queued with the next batch (an ack lost to a crash
 * means one more delivery: at-least-once).
 */
export class FileJournal implements QueueJournal {
  /** The log file being appended to, as a body source (switched by compaction). */
  current: BodyFile;
  /** Set when the store closes: nothing more is written. */
  closed = false;

  constructor(
    private readonly log: GroupCommitLog,
    current: BodyFile,
    private readonly closedError: () => FlintError,
  ) {
    this.current = current;
  }

  stored(queue: string, msg: StoredMessage, dueAt: number | undefined): void {
    if (this.log.failure) throw this.log.failure;
    if (this.closed) throw this.closedError();
    const { frame, bodyOffset, bodyLength } = putFrame(queue, msg, encodeData(msg.data), dueAt);
    // Until the record is written, the data is read from the frame (off the JS heap, unlike its text).
    msg.data = frame;
    msg.body = PENDING;
    msg.bodyAt = bodyOffset;
    msg.bodyLength = bodyLength;
    void this.log.append(frame, (offset) => {
      if (msg.body !== PENDING) return; // a snapshot copied it meanwhile and points there
      msg.body = this.current;
      msg.bodyAt = offset + bodyOffset;
      msg.data = undefined;
    });
  }

  delivered(queue: string, msg: StoredMessage): void {
    this.write(deliveredFrame(queue, msg));
  }

  rescheduled(queue: string, msg: StoredMessage, dueAt: number | undefined): void {
    this.write(rescheduledFrame(queue, msg, dueAt));
  }

  removed(queue: string, id: string): void {
    this.write(removedFrame(queue, id));
  }

  dead(queue: string, entry: DeadEntry): void {
    this.write(deadFrame(queue, entry));
  }

  revived(queue: string, msg: StoredMessage): void {
    this.write(revivedFrame(queue, msg.id));
  }

  deadRemoved(queue: string, id: string): void {
    this.write(discardedFrame(queue, id));
  }

  private write(frame: Buffer): void {
    // After a failure or close the change cannot be kept; the caller of the admin call learns it from `durable`.
    if (this.closed || this.log.failure) return;
    void this.log.append(frame);
  }
}

/** The JSON text of a message's data (what a restart reads back). */
function encodeData(data: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch (err) {
    throw new FlintError('invalid_payload', `the message's data cannot be stored as JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  // `undefined` (or a function) has no JSON text: stored as null, as a JSON round trip would.
  return json ?? 'null';
}
