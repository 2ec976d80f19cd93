/**
 * Frame size defaults: a frame over the default `bridge.max_frame_bytes` (8 MiB) closes its connection
 * with 1009 naming the limit, and the HTTP module's default `max_body_bytes` leaves room for a handler
 * to send back the largest JSON body it accepts.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { serveRoute, waitRouted } from '../support/http/helpers.js';
import { RawClient } from '../support/raw-client.js';
import { within } from '../support/util.js';

afterEach(cleanup);

const MiB = 1024 * 1024;

describe('default frame and body limits', () => {
  it('closes a connection sending a frame over 8 MiB with 1009 naming bridge.max_frame_bytes; the engine keeps serving', async () => {
    const engine = await startTestEngine();
    expect(engine.config.bridge.max_frame_bytes).toBe(8 * MiB);
    const offender = await RawClient.connect(engine.bridgeUrl);
    offender.send({ type: 'invokefunction', invocation_id: randomUUID(), function_id: 'x::y', data: { blob: 'b'.repeat(8 * MiB) } });
    expect(await within(offender.closed, 5000, 'the close')).toEqual({ code: 1009, reason: `frame exceeds bridge.max_frame_bytes (${8 * MiB} bytes)` });
    const other = await RawClient.connect(engine.bridgeUrl);
    await other.registered();
  });

  it('lets a handler send back the largest JSON body the default HTTP config accepts', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0 } }] });
    const [http] = engine.config.modules as { config: { max_body_bytes: number } }[];
    const limit = http?.config.max_body_bytes ?? 0;
    expect(limit).toBeLessThan(engine.config.bridge.max_frame_bytes);
    await startWorker('flint', engine, (w) =>
      serveRoute(w, 'limits::echo', { method: 'POST', path: '/echo' }, (req: { body: unknown; headers: unknown }) => ({ body: req })),
    );
    const base = engine.listeners().find((l) => l.name === 'http')?.url as string;
    await waitRouted(base, 'POST', '/echo');
    // Exactly `limit` bytes of JSON, with characters JSON escapes and a multi-byte one: 'é"\\x' takes 7 bytes.
    const units = Math.floor((limit - '{"s":""}'.length) / 7);
    const body = JSON.stringify({ s: 'é"\\x'.repeat(units) + 'x'.repeat(limit - '{"s":""}'.length - 7 * units) });
    expect(Buffer.byteLength(body)).toBe(limit);
    const res = await within(fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }), 10_000, 'the echo');
    expect(res.status).toBe(200);
    const echoed = (await res.json()) as { body: { s: string }; headers: Record<string, string> };
    expect(echoed.body).toEqual(JSON.parse(body));
  });
});
