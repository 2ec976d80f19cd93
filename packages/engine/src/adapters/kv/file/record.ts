import type { FileHandle } from 'node:fs/promises';
import { crc32 } from '../../shared/crc32.js';

/**
 * The line format shared by the log and the snapshot of the `file_based` KvStore:
 * `<crc32 of the JSON, 8 lowercase hex digits> <JSON>\n`. A line whose checksum or JSON does not
 * check out is damaged (a torn write after a crash, or corruption) and is never applied.
 */

/** A decoded line: a set (`v` present), a delete, or a snapshot's header / trailer. */
export type KvRecord =
  | { o: 's'; s: string; k: string; v: unknown }
  | { o: 'd'; s: string; k: string }
  | { o: 'h'; format: number; generation: number; entries: number }
  | { o: 'e'; entries: number };

function crcHex(data: string | Uint8Array): string {
  return (crc32(data) >>> 0).toString(16).padStart(8, '0');
}

/** One complete line (with its newline) for a JSON text. */
export function encodeLine(json: string): string {
  return `${crcHex(json)} ${json}\n`;
}

export function setJson(scope: string, key: string, valueJson: string): string {
  return `{"o":"s","s":${JSON.stringify(scope)},"k":${JSON.stringify(key)},"v":${valueJson}}`;
}

export function deleteJson(scope: string, key: string): string {
  return `{"o":"d","s":${JSON.stringify(scope)},"k":${JSON.stringify(key)}}`;
}

const SPACE = 0x20;

/** Decodes one line (without its newline); `undefined` when it is damaged. */
export function decodeLine(line: Buffer): KvRecord | undefined {
  if (line.length < 11 || line[8] !== SPACE) return undefined;
  const expected = line.toString('latin1', 0, 8);
  if (!/^[0-9a-f]{8}$/.test(expected)) return undefined;
  const body = line.subarray(9);
  if (crcHex(body) !== expected) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  return isRecord(parsed) ? parsed : undefined;
}

function isRecord(value: unknown): value is KvRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  switch (r.o) {
    case 's':
      return typeof r.s === 'string' && typeof r.k === 'string' && 'v' in r;
    case 'd':
      return typeof r.s === 'string' && typeof r.k === 'string';
    case 'h':
      return typeof r.format === 'number' && Number.isSafeInteger(r.generation) && Number.isSafeInteger(r.entries);
    case 'e':
      return Number.isSafeInteger(r.entries);
    default:
      return false;
  }
}

const CHUNK_BYTES = 1024 * 1024;

/**
 * Reads a file line by line (in 1 MiB chunks, so files of any size work) and calls `onLine` with each
 * line's bytes (no newline), its byte offset and whether it was terminated by a newline (only the last
 * line of a file can be unterminated). Blank lines are reported too.
 */
export async function scanLines(fh: FileHandle, onLine: (line: Buffer, offset: number, terminated: boolean) => void): Promise<number> {
  let position = 0;
  /** Bytes of a line that started in an earlier chunk and has no newline yet. */
  let carry: Buffer[] = [];
  let carryOffset = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const { bytesRead } = await fh.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, bytesRead);
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
      if (carry.length > 0) {
        onLine(Buffer.concat([...carry, data.subarray(0, nl)]), carryOffset, true);
        carry = [];
      } else {
        onLine(data.subarray(start, nl), position + start, true);
      }
      start = nl + 1;
    }
    if (start < data.length) {
      if (carry.length === 0) carryOffset = position + start;
      carry.push(data.subarray(start));
    }
    position += bytesRead;
  }
  if (carry.length > 0) onLine(Buffer.concat(carry), carryOffset, false);
  return position;
}
