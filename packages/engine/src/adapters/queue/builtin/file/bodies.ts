import { type FileHandle, open } from 'node:fs/promises';
import type { BodySource, StoredMessage } from '../memory-queue.js';

/**
 * Where a file_based message's data is read from. The data never stays in memory: the index keeps
 * the file and the byte range of its JSON text (`bodyAt`, `bodyLength`), read back when the message
 * is delivered or peeked.
 */

/** A log or snapshot file, open for reading by offset. Closed once retired (compacted away) and no read is under way. */
export class BodyFile implements BodySource {
  private reading = 0;
  private retired = false;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly path: string,
    /** Also what recovery scans the file through. */
    readonly handle: FileHandle,
  ) {}

  /** Opens `path` for reading now: a snapshot replaced later by a rename keeps being read through this handle. */
  static async open(path: string): Promise<BodyFile> {
    return new BodyFile(path, await open(path, 'r'));
  }

  async load(msg: StoredMessage): Promise<unknown> {
    const text = await this.read(msg.bodyAt as number, msg.bodyLength as number);
    return JSON.parse(text.toString('utf8'));
  }

  /** The bytes [at, at + length) of the file. */
  read(at: number, length: number): Promise<Buffer> {
    return this.readWindow(at, length, length);
  }

  /** At least the bytes [at, at + length) of the file, and up to `want` bytes from `at` where the file has them. */
  async readWindow(at: number, length: number, want: number): Promise<Buffer> {
    this.reading++;
    try {
      const buf = Buffer.allocUnsafe(want);
      let filled = 0;
      while (filled < want) {
        const { bytesRead } = await this.handle.read(buf, filled, want - filled, at + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled < length) throw new Error(`${this.path} ends at byte ${at + filled}, before the record's end (${at + length})`);
      return buf.subarray(0, filled);
    } finally {
      this.reading--;
      if (this.retired && this.reading === 0) void this.close();
    }
  }

  /** No message points here any more: close once the reads under way are done. */
  retire(): void {
    this.retired = true;
    if (this.reading === 0) void this.close();
  }

  close(): Promise<void> {
    this.closed ??= this.handle.close().catch(() => {});
    return this.closed;
  }
}

/**
 * A message whose record is queued but not written yet: `msg.data` holds the record's frame (and
 * `bodyAt` / `bodyLength` the data's place in it) until the log says where the record landed; then
 * `msg.body` points to the log file and the frame is dropped.
 */
export const PENDING: BodySource = {
  async load(msg: StoredMessage): Promise<unknown> {
    return JSON.parse(pendingBody(msg).toString('utf8'));
  },
};

/** The data's JSON text of a PENDING message, as bytes. */
export function pendingBody(msg: StoredMessage): Buffer {
  const at = msg.bodyAt as number;
  return (msg.data as Buffer).subarray(at, at + (msg.bodyLength as number));
}
