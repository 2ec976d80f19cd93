import zlib from 'node:zlib';

/** CRC-32 (IEEE) for the checksummed records of the file-based adapters (kv log lines, queue log frames). */

const TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** Table CRC-32, for runtimes without `zlib.crc32` (added in Node 20.15 / 22.2). */
function tableCrc32(data: string | Uint8Array): number {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** The CRC-32 of `data` (a string is taken as UTF-8), as an unsigned 32-bit number. */
export const crc32: (data: string | Uint8Array) => number = typeof zlib.crc32 === 'function' ? (data) => zlib.crc32(data) >>> 0 : tableCrc32;
