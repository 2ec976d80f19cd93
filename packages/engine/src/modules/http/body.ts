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

/** Reads a JSON body, never buffering more than `limit` bytes. An empty body is `null`. */
export function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('error', reject);
    req.once('end', () => {
      if (size === 0) return resolve(null);
      try {
        resolve(JSON.parse(Buffer.concat(chunks, size).toString('utf8')));
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
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        channel.destroy('payload_too_large', 1009);
        reject(new BodyTooLarge());
        return;
      }
      if (!channel.write({ kind: 'binary', data: chunk })) {
        req.pause();
        void channel.drained().then(() => req.resume());
      }
    };
    req.on('data', onData);
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
