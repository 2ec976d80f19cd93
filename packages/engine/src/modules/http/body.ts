import type { IncomingMessage } from 'node:http';
import type { EngineChannel } from '../../core/module-api.js';

export class BodyTooLarge extends Error {}
export class InvalidJson extends Error {}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

/** True when the request announces a body (content-length > 0 or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

/**
 * Hands each chunk of the body to `onChunk` until more than `limit` bytes arrived; then stops reading
 * (the rest is never buffered; the connection's close discards it, linger.ts) and calls `onTooLarge` instead.
 */
function readUpTo(req: IncomingMessage, limit: number, onChunk: (chunk: Buffer) => void, onTooLarge: () => void): void {
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) return onChunk(chunk);
    req.off('data', onData);
    req.pause();
    onTooLarge();
  };
  req.on('data', onData);
}

/** Reads a JSON body, never buffering more than `limit` bytes. An empty body is `null`. */
export function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] | undefined = [];
    readUpTo(
      req,
      limit,
      (chunk) => chunks?.push(chunk),
      () => {
        chunks = undefined; // the rest of the body is discarded (linger.ts); so is what was read
        reject(new BodyTooLarge());
      },
    );
    req.once('error', reject);
    req.once('end', () => {
      if (!chunks) return;
      const body = Buffer.concat(chunks);
      if (body.length === 0) return resolve(null);
      try {
        resolve(JSON.parse(body.toString('utf8')));
      } catch (err) {
        reject(new InvalidJson((err as Error).message));
      }
    });
  });
}

/**
 * Streams a raw body into the engine's end of the request-body channel as binary items, with
 * back-pressure; ends the channel at the end. Rejects with BodyTooLarge past `limit`.
 */
export function streamBody(req: IncomingMessage, channel: EngineChannel, limit: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onChunk = (chunk: Buffer) => {
      if (!channel.write({ kind: 'binary', data: chunk })) {
        req.pause();
        void channel.drained().then(() => req.resume());
      }
    };
    readUpTo(req, limit, onChunk, () => {
      channel.destroy('payload_too_large', 1009);
      reject(new BodyTooLarge());
    });
    req.once('error', (err) => {
      channel.destroy('request aborted', 1001);
      reject(err);
    });
    req.once('close', () => {
      if (req.complete) return;
      channel.destroy('request aborted', 1001);
      reject(new Error('request aborted'));
    });
    req.once('end', () => {
      channel.end();
      resolve();
    });
  });
}
