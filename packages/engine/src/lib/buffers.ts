/** A WebSocket message (ws's RawData: a Buffer, an ArrayBuffer or a list of Buffer fragments) as one Buffer. */
export function toBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
