/**
 * The Flint worker SDK against a real engine: typed errors, local time-outs, queued calls across an
 * engine restart (reconnect with replay), shutdown and the Logger.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { type Engine, createLogger, startEngine } from '@flint/engine';
import { FlintError, FlintInvocationError, Logger, SDK_VERSION, type Worker, registerWorker } from '@flint/sdk';
import { registerWorker as registerIiiWorker } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { type RawData, WebSocketServer } from 'ws';
import { cleanup, quiet, rejection, track, waitFor } from './support.js';

process.env.OTEL_ENABLED = 'false';

afterEach(cleanup);

async function engineOn(port = 0, options: { logger?: ReturnType<typeof createLogger>; timeoutMs?: number } = {}): Promise<Engine> {
  const config: Record<string, unknown> = { bridge: { port }, log: { level: 'silent' } };
  if (options.timeoutMs) config.invocation_timeout_ms = options.timeoutMs;
  const engine = await startEngine({ config, logger: options.logger });
  track(() => engine.stop());
  return engine;
}

function worker(url: string, name = `sdk-${Math.random().toString(36).slice(2, 8)}`): Worker {
  const w = registerWorker(url, { workerName: name, reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, log: quiet });
  track(() => w.shutdown());
  return w;
}

function listed(engine: Engine, id: string): boolean {
  return engine.listFunctions().some((f) => f.function_id === id);
}

describe('@flint/sdk errors and time-outs', () => {
  it('FlintInvocationError carries the code, message, function id and stack of a failed call', async () => {
    const engine = await engineOn();
    const callee = worker(engine.bridgeUrl);
    callee.registerFunction('err::plain', () => {
      throw new Error('plain failure');
    });
    callee.registerFunction('err::coded', () => {
      throw new FlintError('out_of_stock', 'no widgets left');
    });
    await waitFor(() => listed(engine, 'err::coded'), 2000, 'registration');
    const caller = worker(engine.bridgeUrl);

    const plain = await rejection(caller.trigger({ function_id: 'err::plain', payload: {} }));
    expect(plain).toBeInstanceOf(FlintInvocationError);
    expect(plain).toBeInstanceOf(FlintError);
    expect(plain.code).toBe('invocation_failed');
    expect(plain.message).toBe('plain failure');
    expect(plain.function_id).toBe('err::plain');
    expect(plain.stacktrace).toContain('plain failure');

    const coded = await rejection(caller.trigger({ function_id: 'err::coded', payload: {} }));
    expect(coded.code).toBe('out_of_stock');
    expect(coded.message).toBe('no widgets left');

    const missing = await rejection(caller.trigger({ function_id: 'err::missing', payload: {} }));
    expect(missing.code).toBe('function_not_found');
  });

  it('a result with no JSON form (BigInt, a cycle, a throwing toJSON) is answered result_not_serializable at once, sync or async', async () => {
    const engine = await engineOn();
    const callee = worker(engine.bridgeUrl);
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    const values: Record<string, () => unknown> = {
      'ser::bigint': () => ({ total: 10n }),
      'ser::cycle': () => cycle,
      'ser::tojson': () => ({
        toJSON() {
          throw new Error('no JSON for you');
        },
      }),
    };
    for (const [id, value] of Object.entries(values)) {
      callee.registerFunction(id, value);
      callee.registerFunction(`${id}-async`, async () => value());
    }
    callee.registerFunction('ser::fine', async () => ({ total: 10 }));
    await waitFor(() => listed(engine, 'ser::fine'), 2000, 'registration');
    const caller = worker(engine.bridgeUrl);
    for (const id of Object.keys(values).flatMap((id) => [id, `${id}-async`])) {
      const started = Date.now();
      const err = await rejection(caller.trigger({ function_id: id, payload: {}, timeoutMs: 5000 }));
      expect(err.code, id).toBe('result_not_serializable');
      expect(err.message, id).toMatch(new RegExp(`^${id} returned a value with no JSON form: .+`));
      expect(Date.now() - started, id).toBeLessThan(4000);
    }
    // The worker keeps serving.
    expect(await caller.trigger({ function_id: 'ser::fine', payload: {} })).toEqual({ total: 10 });
  });

  it('a call whose payload has no JSON form is refused with invalid_payload, before anything is sent', async () => {
    const engine = await engineOn();
    const callee = worker(engine.bridgeUrl);
    let runs = 0;
    callee.registerFunction('pl::count', () => {
      runs++;
      return runs;
    });
    await waitFor(() => listed(engine, 'pl::count'), 2000, 'registration');
    const caller = worker(engine.bridgeUrl);
    for (const action of [undefined, { type: 'void' } as const]) {
      const err = await rejection(caller.trigger({ function_id: 'pl::count', payload: { n: 1n }, action }));
      expect(err).toBeInstanceOf(FlintInvocationError);
      expect(err.code).toBe('invalid_payload');
      expect(err.message).toMatch(/^the payload of a call to pl::count has no JSON form: .*BigInt/);
    }
    expect(await caller.trigger({ function_id: 'pl::count', payload: {} })).toBe(1);
  });

  it('a trigger() with no answer times out locally with code invocation_timeout (and sends timeout_ms)', async () => {
    // A bare WebSocket server that accepts the worker and never answers anything: only the SDK's own timer can fire.
    const frames: Record<string, unknown>[] = [];
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    server.on('connection', (ws) => ws.on('message', (data: RawData) => frames.push(JSON.parse(data.toString()) as Record<string, unknown>)));
    track(
      () =>
        new Promise<void>((resolve) => {
          for (const c of server.clients) c.terminate();
          server.close(() => resolve());
        }),
    );
    const address = server.address() as { port: number };
    const w = worker(`ws://127.0.0.1:${address.port}`);
    await w.waitConnected();
    const startedAt = Date.now();
    const err = await rejection(w.trigger({ function_id: 'silent::fn', payload: { a: 1 }, timeoutMs: 200 }));
    const elapsed = Date.now() - startedAt;
    expect(err).toBeInstanceOf(FlintInvocationError);
    expect(err.code).toBe('invocation_timeout');
    expect(err.function_id).toBe('silent::fn');
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(2000);
    const sent = frames.find((f) => f.type === 'invokefunction' && f.function_id === 'silent::fn');
    expect(sent).toMatchObject({ data: { a: 1 }, timeout_ms: 200 });
    expect(typeof sent?.invocation_id).toBe('string');
  });

  it('shutdown() rejects pending calls with worker_shutting_down', async () => {
    const engine = await engineOn();
    const callee = worker(engine.bridgeUrl);
    let started = false;
    callee.registerFunction('slow::fn', () => {
      started = true;
      return new Promise(() => {});
    });
    await waitFor(() => listed(engine, 'slow::fn'), 2000, 'registration');
    const caller = worker(engine.bridgeUrl);
    const pending = rejection(caller.trigger({ function_id: 'slow::fn', payload: {} }));
    await waitFor(() => started, 2000, 'the handler to start');
    await caller.shutdown();
    const err = await pending;
    expect(err).toBeInstanceOf(FlintInvocationError);
    expect(err.code).toBe('worker_shutting_down');
    // After shutdown new calls are refused the same way.
    expect((await rejection(caller.trigger({ function_id: 'slow::fn', payload: {} }))).code).toBe('worker_shutting_down');
    expect((await rejection(caller.trigger({ function_id: 'slow::fn', payload: {}, action: { type: 'void' } }))).code).toBe('worker_shutting_down');
  });
});

describe.each(['flint', 'iii'] as const)('reconnect with a %s worker', (kind) => {
  it('queues calls made while the engine is down and runs them after it comes back on the same port', async () => {
    const first = await engineOn();
    const port = Number(new URL(first.bridgeUrl).port);
    const url = first.bridgeUrl;
    const received: unknown[] = [];
    const handler = async (d: unknown) => {
      received.push(d);
      return { echoed: d };
    };
    let call: (payload: unknown) => Promise<unknown>;
    let isConnected = () => false; // iii-sdk exposes no connection state; first.stop() already waited for its socket to close
    if (kind === 'flint') {
      const w = worker(url);
      w.registerFunction('rc::echo', handler);
      w.registerFunction('rc::watch', () => null);
      w.registerTrigger({ type: 'engine::workers-available', function_id: 'rc::watch', config: {} });
      call = (payload) => w.trigger({ function_id: 'rc::echo', payload });
      isConnected = () => w.connected;
    } else {
      const w = registerIiiWorker(url, {
        workerName: 'iii-rc',
        otel: { enabled: false },
        enableMetricsReporting: false,
        reconnectionConfig: { initialDelayMs: 50, maxDelayMs: 200 },
      });
      track(() => w.shutdown());
      w.registerFunction('rc::echo', handler);
      w.registerFunction('rc::watch', async () => null);
      w.registerTrigger({ type: 'engine::workers-available', function_id: 'rc::watch', config: {} });
      call = (payload) => w.trigger({ function_id: 'rc::echo', payload });
    }
    await waitFor(() => listed(first, 'rc::echo'), 2000, 'registration on the first engine');
    expect(await call('before')).toEqual({ echoed: 'before' });
    const triggerIds = await waitFor(async () => {
      const list = ((await first.invoke('engine::triggers::list', {})) as { triggers: { id: string; function_id: string }[] }).triggers;
      const ids = list.filter((t) => t.function_id === 'rc::watch').map((t) => t.id);
      return ids.length === 1 ? ids : undefined;
    });

    // stop() resolves once every worker socket is closed; the Flint SDK also reports it.
    await first.stop();
    await waitFor(() => !isConnected(), 2000, 'the worker to notice');
    const queued = call('while-down');

    const second = await engineOn(port);
    expect(second.bridgeUrl).toBe(url);
    expect(await Promise.race([queued, new Promise((_, reject) => setTimeout(() => reject(new Error('queued call did not complete')), 5000))])).toEqual({
      echoed: 'while-down',
    });
    expect(listed(second, 'rc::echo')).toBe(true);
    // The trigger was replayed too, with the same id.
    const triggersOn = async (engine: Engine) =>
      ((await engine.invoke('engine::triggers::list', {})) as { triggers: { id: string; function_id: string; status: string }[] }).triggers.filter(
        (t) => t.function_id === 'rc::watch',
      );
    expect(triggerIds).toHaveLength(1);
    const replayed = await waitFor(async () => {
      const list = await triggersOn(second);
      return list.length === 1 ? list : undefined;
    });
    expect(replayed.map((t) => t.id)).toEqual(triggerIds);
    expect(replayed[0]?.status).toBe('active');
    // Another worker can call the replayed function on the new engine.
    const caller = worker(second.bridgeUrl);
    expect(await caller.trigger({ function_id: 'rc::echo', payload: 'from-caller' })).toEqual({ echoed: 'from-caller' });
    expect(received).toEqual(['before', 'while-down', 'from-caller']);
  });
});

describe('Logger', () => {
  it('writes through engine::log::<level> into the engine log', async () => {
    const destination = new PassThrough();
    let output = '';
    destination.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const logger = createLogger({ destination, format: 'json', level: 'debug' });
    const engine = await engineOn(0, { logger });
    const w = worker(engine.bridgeUrl, 'logger-worker');
    await w.waitConnected();
    const log = new Logger(w, 'billing');
    log.info('invoice sent', { invoice: 42 });
    log.warn('card expiring');
    log.error('charge failed');
    // Data JSON cannot carry as is still gets its line: BigInts as strings, cycles marked, a throwing toJSON noted.
    const order: Record<string, unknown> = { id: 7, total: 12345678901234567890n, lines: [{ sku: 'A1' }, { sku: 'A1' }] };
    order.self = order;
    log.info('order with a bigint', order);
    log.info('order with a bad toJSON', {
      toJSON() {
        throw new Error('not today');
      },
    });

    const lines = () =>
      output
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const info = await waitFor(() => lines().find((l) => l.msg === 'invoice sent'), 2000, 'the info line');
    expect(info).toMatchObject({ level: 30, source: 'worker', service_name: 'billing', data: { invoice: 42 }, worker_id: w.workerId });
    const warn = await waitFor(() => lines().find((l) => l.msg === 'card expiring'), 2000, 'the warn line');
    expect(warn.level).toBe(40);
    const error = await waitFor(() => lines().find((l) => l.msg === 'charge failed'), 2000, 'the error line');
    expect(error.level).toBe(50);
    const big = await waitFor(() => lines().find((l) => l.msg === 'order with a bigint'), 2000, 'the bigint line');
    expect(big.data).toEqual({ id: 7, total: '12345678901234567890', lines: [{ sku: 'A1' }, { sku: 'A1' }], self: '[Circular]' });
    const bad = await waitFor(() => lines().find((l) => l.msg === 'order with a bad toJSON'), 2000, 'the toJSON line');
    expect(bad.data).toBe('[no JSON form: not today]');
  });

  it('tags lines written inside a handler with the trace id of the invocation', async () => {
    const destination = new PassThrough();
    let output = '';
    destination.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const engine = await engineOn(0, { logger: createLogger({ destination, format: 'json', level: 'info' }) });
    const w = worker(engine.bridgeUrl);
    const log = new Logger(w);
    w.registerFunction('log::in-handler', () => {
      log.info('inside the handler');
      return 'ok';
    });
    await waitFor(() => listed(engine, 'log::in-handler'), 2000, 'registration');
    // A raw caller supplies a traceparent; the SDK exposes it to the Logger through the invocation scope.
    const ws = new WebSocket(engine.bridgeUrl);
    track(() => ws.terminate());
    await once(ws, 'open');
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    ws.send(
      JSON.stringify({
        type: 'invokefunction',
        invocation_id: '6f1c2a4e-1b2c-4d3e-8f90-0a1b2c3d4e5f',
        function_id: 'log::in-handler',
        data: {},
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      }),
    );
    const line = await waitFor(
      () =>
        output
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.msg === 'inside the handler'),
      2000,
      'the handler log line',
    );
    expect(line.trace_id).toBe(traceId);
  });
});

describe('SDK_VERSION', () => {
  it('is the version of the published package (workers announce it to the engine)', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
