/**
 * Answers an ordinary client sends a body to, as it sees them: an application that uploads 100 MB with
 * `http.request` keeps sending after the answer, and must still read it (a 413, a handler's early
 * answer, a 404) rather than an ECONNRESET or EPIPE: the engine answers, passes no more of the body on,
 * and closes gracefully while it reads and discards the rest, within bounds. The client runs in its own
 * process (support/http/ordinary-upload.mjs); the engine runs in this one, whose memory must not grow by
 * the body size (the discarded bytes are never buffered).
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { http as flintHttp } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startWorker } from '../support/harness.js';
import { serveRoute, startHttpEngine } from '../support/http/helpers.js';
import { waitFor, within } from '../support/util.js';

afterEach(cleanup);

const MiB = 1024 * 1024;
const UPLOAD = 100 * 1000 * 1000;
const ATTEMPTS = 20;
const uploadScript = fileURLToPath(new URL('../support/http/ordinary-upload.mjs', import.meta.url));

interface UploadOutcome {
  status?: number;
  connection?: string;
  body?: string;
  error?: string;
}

/** Runs `count` uploads in a row in a child process; its memory samples this process's RSS meanwhile. */
async function uploads(url: string, framing: 'content-length' | 'chunked', contentType: string): Promise<{ outcomes: UploadOutcome[]; rssGrowth: number }> {
  const rssBefore = process.memoryUsage().rss;
  let rssGrowth = 0;
  const sampler = setInterval(() => {
    rssGrowth = Math.max(rssGrowth, process.memoryUsage().rss - rssBefore);
  }, 20);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [uploadScript, url, String(UPLOAD), framing, contentType, String(ATTEMPTS)], {
      timeout: 60_000,
    });
    const outcomes = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as UploadOutcome);
    return { outcomes, rssGrowth };
  } finally {
    clearInterval(sampler);
  }
}

/** An engine (max_body_bytes 1 MiB) with the routes the uploads go to; `received` lists what /up/raw's handler was handed. */
async function uploadEngine(maxBodyBytes = MiB) {
  const { engine, base } = await startHttpEngine({ max_body_bytes: maxBodyBytes });
  const received: number[] = [];
  const jsonCalls: unknown[] = [];
  await startWorker('flint', engine, (w) => {
    serveRoute(
      w,
      'up::raw',
      { method: 'POST', path: '/up/raw' },
      flintHttp(async (req, res) => {
        res.stream.on('error', () => {}); // after the 413 the response channel is gone
        let size = 0;
        try {
          for await (const chunk of req.request_body.stream as AsyncIterable<Buffer>) size += chunk.length;
        } catch {
          // the engine cuts the body channel at the limit
        }
        received.push(size);
        res.status(200);
        res.stream.end(`got ${size}`);
      }),
    );
    serveRoute(w, 'up::json', { method: 'POST', path: '/up/json' }, (input: unknown) => {
      jsonCalls.push(input);
      return { body: 'unexpected' };
    });
    // Answers at once without reading the body, which then goes over the limit after the answer.
    serveRoute(w, 'up::early', { method: 'POST', path: '/up/early' }, () => ({ status_code: 202, body: 'early' }));
  });
  const released = () => waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 5000, 'channels and calls to be released');
  return { base, received, jsonCalls, released };
}

describe('413 payload_too_large for an ordinary client', () => {
  it.each([
    { what: 'a declared content-length (answered before any of it is read)', framing: 'content-length' as const, path: '/up/raw' },
    { what: 'a chunked raw body streamed to the handler', framing: 'chunked' as const, path: '/up/raw' },
    { what: 'a chunked JSON body', framing: 'chunked' as const, path: '/up/json' },
  ])(`reads the 413 ${ATTEMPTS} times out of ${ATTEMPTS} for a 100 MB upload with $what`, async ({ framing, path }) => {
    const { base, received, jsonCalls, released } = await uploadEngine();
    const contentType = path === '/up/json' ? 'application/json' : 'application/octet-stream';
    const { outcomes, rssGrowth } = await uploads(`${base}${path}`, framing, contentType);

    expect(outcomes).toHaveLength(ATTEMPTS);
    const failed = outcomes.filter((o) => o.status !== 413 || o.connection !== 'close' || JSON.parse(o.body ?? '{}').code !== 'payload_too_large');
    expect(failed, 'uploads that did not read the 413').toEqual([]);
    // The engine does not hold the body: its process grows by less than one body's size (20 bodies
    // arrived; what it grows by is mostly discarded reads not yet garbage-collected).
    expect(rssGrowth, 'RSS growth of the engine process during the uploads').toBeLessThan(0.75 * UPLOAD);
    // Nobody was handed more than the limit, and nothing is left behind.
    expect(received.every((n) => n <= MiB)).toBe(true);
    expect(jsonCalls).toEqual([]);
    await released();
  });

  it.each([
    { what: "a handler's 202", path: '/up/early', status: 202, body: '"early"' },
    { what: 'a 404', path: '/nowhere', status: 404, body: expect.stringContaining('route_not_found') },
  ])(`reads $what given before the body was read ${ATTEMPTS} times out of ${ATTEMPTS}`, async ({ path, status, body }) => {
    // A limit high enough that the handler answers first; the body goes over it afterwards.
    const { base, released } = await uploadEngine(32 * MiB);
    const { outcomes } = await uploads(`${base}${path}`, 'chunked', 'application/octet-stream');
    expect(outcomes).toHaveLength(ATTEMPTS);
    expect(outcomes).toEqual(Array(ATTEMPTS).fill({ status, connection: 'close', body }));
    await released();
  });
});

/**
 * A raw client that sends a chunked JSON POST and keeps sending body bytes, never reading: 64 KiB
 * chunks as fast as the socket takes them, or, with `trickle`, 2 MiB at once (over the limit) and then
 * 1 KiB every 50 ms. Resolves once the server has closed the connection.
 */
function sendUntilClosed(url: string, trickle: boolean): Promise<{ sent: number; ms: number }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  const chunkOf = (size: number) => Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x20), Buffer.from('\r\n')]);
  const big = chunkOf(64 * 1024);
  const small = chunkOf(1024);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      while (!socket.destroyed) {
        const slow = trickle && sent >= 2 * MiB;
        sent += slow ? 1024 : 64 * 1024;
        if (!socket.write(slow ? small : big)) return void socket.once('drain', pump);
        if (slow) {
          timer = setTimeout(pump, 50);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write('POST /up HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-type: application/json\r\n\r\n');
      pump();
    });
    socket.pause(); // never reads the answer (nor the end of the stream after it)
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ sent, ms: Date.now() - started });
    });
  });
}

describe('413 payload_too_large for a client that ignores it', () => {
  it('closes the connection anyway, after a bounded amount of discarded bytes or a bounded time', async () => {
    const { engine, base } = await startHttpEngine({ max_body_bytes: MiB });
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'up::json', { method: 'POST', path: '/up' }, () => ({ body: 'unexpected' }));
    });
    const [fast, slow] = await within(
      Promise.all([sendUntilClosed(`${base}/up`, false), sendUntilClosed(`${base}/up`, true)]),
      25_000,
      'both connections to close',
    );
    // The fast one is cut after some hundred MiB at most; the slow one after seconds, not never.
    expect(fast.sent).toBeGreaterThan(MiB);
    expect(fast.sent).toBeLessThan(512 * MiB);
    expect(slow.ms).toBeGreaterThan(1000);
    expect(slow.ms).toBeLessThan(20_000);
  });
});
