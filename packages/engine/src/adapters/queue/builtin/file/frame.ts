import type { FileHandle } from 'node:fs/promises';
import { crc32 } from '../../../shared/crc32.js';

/**
 * The record format of the queue's log and snapshot files: binary frames, so that a message's data
 * can be read back by offset without reading anything around it.
 *
 *   frame   = u32le payload length | u32le crc32(payload) | payload
 *   payload = u32le meta length | meta (JSON text, utf8) | body (the data's JSON text, utf8; may be empty)
 *
 * A frame whose length runs past the end of the file or whose checksum does not match is damaged
 * (a write torn by a crash, or corruption); nothing after it in that file is trusted.
 */

const FRAME_HEADER = 8;
const META_HEADER = 4;
/** Larger claims are damage, not records (a message is far smaller: the engine caps payloads well below). */
const MAX_PAYLOAD = 512 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export interface EncodedFrame {
  frame: Buffer;
  /** Where the body starts, from the frame's start. */
  bodyOffset: number;
  bodyLength: number;
}

/** A frame of `meta` and `body` (text, or bytes already encoded: a snapshot copies them from the log). */
export function encodeFrame(meta: string, body: string | Buffer = ''): EncodedFrame {
  const metaLength = Buffer.byteLength(meta, 'utf8');
  const bodyLength = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  const payloadLength = META_HEADER + metaLength + bodyLength;
  const frame = Buffer.allocUnsafe(FRAME_HEADER + payloadLength);
  frame.writeUInt32LE(payloadLength, 0);
  frame.writeUInt32LE(metaLength, FRAME_HEADER);
  frame.write(meta, FRAME_HEADER + META_HEADER, metaLength, 'utf8');
  const bodyOffset = FRAME_HEADER + META_HEADER + metaLength;
  if (typeof body !== 'string') body.copy(frame, bodyOffset);
  else if (bodyLength > 0) frame.write(body, bodyOffset, bodyLength, 'utf8');
  frame.writeUInt32LE(crc32(frame.subarray(FRAME_HEADER)), 4);
  return { frame, bodyOffset, bodyLength };
}

/** One frame as read back: its meta parsed, and where its body lies in the file. */
export interface ScannedFrame {
  meta: Record<string, unknown>;
  /** Byte offset of the body in the file, and its length. */
  bodyAt: number;
  bodyLength: number;
  /** The body's bytes (only valid during the callback: copy what must outlive it). */
  body: Buffer;
}

export interface ScanResult {
  /** Where the last good frame ends: everything before is valid. */
  goodEnd: number;
  size: number;
}

/**
 * Reads a file's frames in order (in 1 MiB chunks, so files of any size work) and calls `onFrame` with
 * each; stops at the first damaged frame (see the format above) or the end of the file.
 */
export async function scanFrames(fh: FileHandle, onFrame: (frame: ScannedFrame) => void): Promise<ScanResult> {
  const size = (await fh.stat()).size;
  let buf = Buffer.alloc(0);
  /** File offset of buf[0]. */
  let bufAt = 0;
  let pos = 0;

  /** Makes buf hold the file's bytes [pos, pos + need); false when the file ends first. */
  const fill = async (need: number): Promise<boolean> => {
    if (pos + need > size) return false;
    if (bufAt + buf.length >= pos + need) return true;
    const keep = buf.subarray(pos - bufAt);
    const want = Math.max(CHUNK_BYTES, need - keep.length);
    const next = Buffer.allocUnsafe(keep.length + Math.min(want, size - (bufAt + buf.length)));
    keep.copy(next, 0);
    let filled = keep.length;
    while (filled < next.length) {
      const { bytesRead } = await fh.read(next, filled, next.length - filled, pos + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    buf = next.subarray(0, filled);
    bufAt = pos;
    return filled >= need;
  };

  while (pos < size) {
    if (!(await fill(FRAME_HEADER))) break;
    let at = pos - bufAt;
    const payloadLength = buf.readUInt32LE(at);
    const crc = buf.readUInt32LE(at + 4);
    if (payloadLength < META_HEADER || payloadLength > MAX_PAYLOAD) break;
    if (!(await fill(FRAME_HEADER + payloadLength))) break;
    at = pos - bufAt;
    const payload = buf.subarray(at + FRAME_HEADER, at + FRAME_HEADER + payloadLength);
    if (crc32(payload) !== crc) break;
    const metaLength = payload.readUInt32LE(0);
    if (metaLength > payloadLength - META_HEADER) break;
    let meta: unknown;
    try {
      meta = JSON.parse(payload.toString('utf8', META_HEADER, META_HEADER + metaLength));
    } catch {
      break;
    }
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) break;
    const bodyStart = META_HEADER + metaLength;
    onFrame({
      meta: meta as Record<string, unknown>,
      bodyAt: pos + FRAME_HEADER + bodyStart,
      bodyLength: payloadLength - bodyStart,
      body: payload.subarray(bodyStart),
    });
    pos += FRAME_HEADER + payloadLength;
  }
  return { goodEnd: pos, size };
}
