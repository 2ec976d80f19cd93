/**
 * Writes to a closed response or channel: once the HTTP client has gone away (or the reader of a
 * channel), `closed` turns true, `onClose` listeners run once, and every write rejects with a
 * `channel_closed` FlintError — so an SSE loop ends instead of running forever, and a write racing the
 * close never crashes the worker.
 */
import { type ClientRequest, request } from 'node:http';
import type { Engine } from '@flint/engine';
import { FlintError, type HttpResponse, type Worker, http } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, deferred, rejection, sleep, startTestEngine, startWorker, waitFor, within } from './support.js';

afterEach(cleanup);

async function httpEngine(): Promise<{ engine: Engine; base: string }> {
  const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0, default_timeout_ms: 5000 } }] });
  const base = engine.listeners().find((l) => l.name === 'http')?.url;
  if (!base) throw new Error('the engine has no http listener');
  return { engine, base };
}

/** Serves GET `path` with an http() handler and waits until the route is applied. */
async function serve(worker: Worker, path: string, handler: (res: HttpResponse) => Promise<unknown>): Promise<void> {
  const id = `closed::${path.slice(1)}`;
  worker.registerFunction(
    id,
    http((_req, res) => handler(res)),
  );
  await worker.registerTrigger({ type: 'http', function_id: id, config: { api_path: path, http_method: 'GET' } }).ready;
}

/** GETs `url`, and once `events` SSE events have arrived, goes away (destroys the connection). */
function getThenAbort(url: string, events: number): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    let text = '';
    const req: ClientRequest = request(url, (res) => {
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.split('\n\n').length > events) {
          req.destroy();
          resolve();
        }
      });
      res.on('end', () => reject(new Error(`the response ended before ${events} events: HTTP ${res.statusCode} ${text}`)));
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
  return within(done, 3000, `${events} events from ${url}`);
}

/** Records unhandled rejections and uncaught exceptions while a test runs. */
function watchCrashes(): unknown[] {
  const seen: unknown[] = [];
  const record = (err: unknown) => seen.push(err);
  process.on('unhandledRejection', record);
  process.on('uncaughtException', record);
  afterEach(() => {
    process.off('unhandledRejection', record);
    process.off('uncaughtException', record);
  });
  return seen;
}

function expectChannelClosed(err: unknown, message: RegExp): void {
  expect(err).toBeInstanceOf(FlintError);
  expect((err as FlintError).code).toBe('channel_closed');
  expect((err as FlintError).message).toMatch(message);
}

describe('http() response after the client went away', () => {
  it('an SSE loop `while (true)` ends: its write rejects with channel_closed, and onClose fired once', async () => {
    const { engine, base } = await httpEngine();
    const worker = startWorker(engine.bridgeUrl);
    const ended = deferred<{ error: unknown; closes: number; closed: boolean }>();
    let closes = 0;
    await serve(worker, '/forever', async (res) => {
      res.onClose(() => closes++);
      let error: unknown;
      try {
        for (let i = 0; ; i++) {
          await res.sse({ id: i, data: { i } });
          await sleep(5);
        }
      } catch (err) {
        error = err;
      }
      ended.resolve({ error, closes, closed: res.closed });
    });
    await getThenAbort(`${base}/forever`, 3);
    const outcome = await within(ended.promise, 3000, 'the SSE loop to end after the client left');
    expectChannelClosed(outcome.error, /^the HTTP response is closed: the client went away/);
    expect(outcome.closed).toBe(true);
    await sleep(50);
    expect(closes).toBe(1);
  });

  it('a loop `while (!res.closed)` ends; later writes reject with channel_closed; everything is released', async () => {
    const { engine, base } = await httpEngine();
    const worker = startWorker(engine.bridgeUrl);
    const ended = deferred<{ writes: number; late: unknown[] }>();
    await serve(worker, '/until-closed', async (res) => {
      let writes = 0;
      while (!res.closed) {
        // A write the close overtakes rejects; the loop condition ends the loop either way.
        await res.sse({ data: writes }).then(
          () => writes++,
          () => {},
        );
        await sleep(5);
      }
      const late = await Promise.all([rejection(res.write('late')), rejection(res.sse({ data: 'late' }))]);
      ended.resolve({ writes, late });
    });
    await getThenAbort(`${base}/until-closed`, 2);
    const outcome = await within(ended.promise, 3000, 'the loop to end after the client left');
    expect(outcome.writes).toBeGreaterThanOrEqual(2);
    for (const err of outcome.late) expectChannelClosed(err, /^the HTTP response is closed: /);
    // The invocation finished and nothing is left open.
    await waitFor(() => engine.stats().pendingInvocations === 0 && engine.stats().channels === 0, 3000, 'the call and its channels to be released');
  });

  it('a handler that lets the channel_closed rejection propagate ends normally, not as a failed call', async () => {
    const engine = await startTestEngine();
    const worker = startWorker(engine.bridgeUrl);
    worker.registerFunction(
      'closed::propagate',
      http(async (_req, res) => {
        for (let i = 0; ; i++) {
          await res.sse({ data: i });
          await sleep(5);
        }
      }),
    );
    // Called directly with a channel standing in for the engine's response channel: its reader leaves.
    const caller = startWorker(engine.bridgeUrl);
    const { reader, writerRef } = await caller.createChannel();
    const call = caller.trigger({ function_id: 'closed::propagate', payload: { response: writerRef }, timeoutMs: 5000 });
    const first = deferred();
    reader.stream.once('data', () => first.resolve());
    await within(first.promise, 3000, 'the first event');
    reader.close();
    await expect(call).resolves.toBeNull(); // answered, with no result (not a failure)
  });

  it('onClose alone notices the client leaving, without writing', async () => {
    const { engine, base } = await httpEngine();
    const worker = startWorker(engine.bridgeUrl);
    const closedSeen = deferred<boolean>();
    await serve(worker, '/quiet', async (res) => {
      await res.write('data: hello\n\n');
      await new Promise<void>((resolve) => res.onClose(resolve));
      closedSeen.resolve(res.closed);
    });
    await getThenAbort(`${base}/quiet`, 1);
    expect(await within(closedSeen.promise, 3000, 'onClose after the client left')).toBe(true);
  });

  it('writes after the handler closed the response reject with channel_closed', async () => {
    const { engine, base } = await httpEngine();
    const worker = startWorker(engine.bridgeUrl);
    const after = deferred<{ error: unknown; closes: number }>();
    await serve(worker, '/closed-by-handler', async (res) => {
      let closes = 0;
      res.onClose(() => closes++);
      await res.write('done');
      res.close();
      const error = await rejection(res.write('more'));
      await sleep(50);
      after.resolve({ error, closes });
    });
    const body = await (await fetch(`${base}/closed-by-handler`)).text();
    expect(body).toBe('done');
    const { error, closes } = await within(after.promise, 3000, 'the write after close');
    expectChannelClosed(error, /^the HTTP response is closed: the handler ended it$/);
    expect(closes).toBe(1);
  });

  it('unawaited writes racing the close cause no unhandled rejection, and the worker keeps serving', async () => {
    const crashes = watchCrashes();
    const { engine, base } = await httpEngine();
    const worker = startWorker(engine.bridgeUrl);
    const stopped = deferred();
    await serve(worker, '/flood', async (res) => {
      // Fire-and-forget writes, never awaited: the ones the close overtakes must not surface anywhere.
      while (!res.closed) {
        for (let i = 0; i < 20; i++) void res.sse({ data: 'x'.repeat(100) });
        await sleep(1);
      }
      for (let i = 0; i < 20; i++) void res.write('after');
      stopped.resolve();
    });
    await serve(worker, '/still-here', async (res) => {
      await res.write('yes');
    });
    await getThenAbort(`${base}/flood`, 10);
    await within(stopped.promise, 3000, 'the flood to stop after the client left');
    await sleep(100);
    expect(crashes).toEqual([]);
    expect(await (await fetch(`${base}/still-here`)).text()).toBe('yes');
    expect(worker.connected).toBe(true);
  });
});

describe('a ChannelWriter whose reader went away', () => {
  it('turns closed, runs onClose once and rejects writes with channel_closed', async () => {
    const engine = await startTestEngine();
    const worker = startWorker(engine.bridgeUrl);
    const { writer, reader } = await worker.createChannel();
    let closes = 0;
    writer.onClose(() => closes++);
    const received = deferred();
    reader.stream.once('data', () => received.resolve());
    await writer.write('first');
    await within(received.promise, 3000, 'the first chunk to arrive');
    reader.close();
    await waitFor(() => writer.closed, 3000, 'the writer to notice the reader left');
    expectChannelClosed(await rejection(writer.write('second')), /^channel \S+ is closed: the other end went away/);
    expectChannelClosed(await rejection(writer.sendMessage('text')), /is closed/);
    await sleep(50);
    expect(closes).toBe(1);
    // onClose after the close still runs (once).
    const late = deferred();
    writer.onClose(() => late.resolve());
    await within(late.promise, 1000, 'a late onClose listener');
  });
});
