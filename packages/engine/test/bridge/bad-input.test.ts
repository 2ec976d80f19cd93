/**
 * Bad input on the worker bridge: every malformed, oversized or abusive input gets a clear error or
 * close reason, the engine keeps serving the other workers, and nothing leaks (no pending
 * invocations, no channels, no stale worker connections).
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { type Engine, startEngine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo, type TriggerInfo, closeReason } from '@flint/protocol';
import { FlintInvocationError, type Worker, registerWorker } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type Frame, RawClient } from '../support/raw-client.js';
import { sleep, waitFor } from '../support/util.js';

const quiet = { warn: () => {}, error: () => {}, debug: () => {} };
const KiB = 1024;
/** How long the after-each leak checks wait for the engine to settle. */
const LEAK_WAIT_MS = 3000;

let engine: Engine | undefined;
const raws: RawClient[] = [];
const workers: Worker[] = [];

async function start(config: Record<string, unknown> = {}): Promise<Engine> {
  engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, ...config } });
  return engine;
}

function eng(): Engine {
  if (!engine) throw new Error('engine not started');
  return engine;
}

async function raw(): Promise<RawClient> {
  const client = await RawClient.connect(eng().bridgeUrl);
  raws.push(client);
  await client.registered();
  return client;
}

async function worker(name: string): Promise<Worker> {
  const w = registerWorker(eng().bridgeUrl, { workerName: name, log: quiet, invocationTimeoutMs: 10_000 });
  workers.push(w);
  await w.waitConnected();
  return w;
}

/** A Flint worker providing `bi::echo`, and a second one calling it: proof the engine still serves. */
async function echoPair(): Promise<{ provider: Worker; caller: Worker; check: () => Promise<void> }> {
  const provider = await worker('bi-echo');
  provider.registerFunction('bi::echo', (input: unknown) => input);
  const caller = await worker('bi-caller');
  await waitFor(
    () =>
      eng()
        .listFunctions()
        .some((f) => f.function_id === 'bi::echo'),
    5000,
    'bi::echo to be registered',
  );
  const check = async () => {
    const payload = { ping: randomUUID() };
    await expect(caller.trigger({ function_id: 'bi::echo', payload, timeoutMs: 3000 })).resolves.toEqual(payload);
  };
  return { provider, caller, check };
}

/** A sync call round-trip: every frame the client sent before it has been processed. */
const barrier = (c: RawClient) => c.invoke(EngineFunctions.LIST_FUNCTIONS, { include_internal: false });

const listedFunctions = async (c: RawClient) => ((await barrier(c)).result as { functions: FunctionInfo[] }).functions.map((f) => f.function_id);
const listedTriggers = async (c: RawClient) =>
  ((await c.invoke(EngineFunctions.LIST_TRIGGERS, {})).result as { triggers: TriggerInfo[] }).triggers.map((t) => t.id);

afterEach(async () => {
  const e = engine;
  engine = undefined;
  try {
    if (e) {
      // Leak checks while everything is still connected: the engine's counts match what is connected.
      const connected = () => raws.filter((r) => r.open).length + workers.filter((w) => w.connected).length;
      await waitFor(
        () => e.stats().workers === connected(),
        LEAK_WAIT_MS,
        () => `engine worker count ${e.stats().workers} to match ${connected()} open connections`,
      );
      await waitFor(
        () => e.stats().pendingInvocations === 0,
        LEAK_WAIT_MS,
        () => `pending invocations (${e.stats().pendingInvocations}) to drain`,
      );
      expect(e.stats().channels).toBe(0);
    }
  } finally {
    for (const r of raws.splice(0)) await r.close();
    for (const w of workers.splice(0)) await w.shutdown();
    if (e) {
      try {
        await waitFor(() => e.stats().workers === 0, LEAK_WAIT_MS, 'every connection to be cleaned up');
        expect(e.stats().pendingInvocations).toBe(0);
      } finally {
        // Bounded, so a wedged connection shows up as a failure instead of a hook time-out.
        await Promise.race([
          e.stop(),
          sleep(5000).then(() => {
            throw new Error('engine.stop() did not finish within 5 s');
          }),
        ]);
      }
    }
  }
});

describe('malformed frames get an error and the connection stays open', () => {
  it('a non-JSON text frame gets {type:"error", code:"invalid_frame"}; a following call works', async () => {
    await start();
    const { check } = await echoPair();
    const client = await raw();
    client.send('this is { not json');
    const error = await client.next((f) => f.type === 'error');
    expect(error.error).toEqual({ code: 'invalid_frame', message: expect.stringMatching(/JSON/) });
    expect(client.open).toBe(true);
    const answer = await client.invoke('bi::echo', { after: 'garbage' });
    expect(answer).toMatchObject({ type: 'invocationresult', function_id: 'bi::echo', result: { after: 'garbage' } });
    expect(answer.error).toBeUndefined();
    await check();
  });

  it.each<[string, string | Frame, RegExp]>([
    ['an unknown type', { type: 'frobnicate', id: 'x' }, /frobnicate/],
    ['an object without type', { id: 'x' }, /type/],
    ['a JSON array', '[1,2,3]', /object/],
    ['a JSON string', '"registerfunction"', /object/],
    ['JSON null', 'null', /object/],
    ['an empty frame', '', /JSON/],
  ])('%s gets an invalid_frame error and the connection stays open', async (_name, frame, reason) => {
    await start();
    const client = await raw();
    client.send(frame);
    const error = await client.next((f) => f.type === 'error');
    expect(error.error).toEqual({ code: 'invalid_frame', message: expect.stringMatching(reason) });
    expect(client.open).toBe(true);
    expect((await barrier(client)).error).toBeUndefined();
  });

  it.each<[string, Frame, RegExp]>([
    ['registerfunction without id', { type: 'registerfunction', description: 'no id' }, /id/],
    ['registerfunction with a numeric id', { type: 'registerfunction', id: 42 }, /id must be a string/],
    ['registerfunction with a non-string description', { type: 'registerfunction', id: 'bi::desc', description: 7 }, /description/],
    [
      'registertrigger with an empty trigger_type',
      { type: 'registertrigger', id: 'trg-1', trigger_type: '', function_id: 'bi::x', config: {} },
      /trigger_type/,
    ],
    ['registertrigger without trigger_type', { type: 'registertrigger', id: 'trg-2', function_id: 'bi::x', config: {} }, /trigger_type/],
    ['registertrigger with a numeric function_id', { type: 'registertrigger', id: 'trg-3', trigger_type: 'bi::t', function_id: 5, config: {} }, /function_id/],
    ['registertrigger without id', { type: 'registertrigger', trigger_type: 'bi::t', function_id: 'bi::x', config: {} }, /id/],
    ['registertriggertype without id', { type: 'registertriggertype', description: 'x' }, /id/],
    ['invokefunction without function_id nor invocation_id', { type: 'invokefunction', data: {}, action: { type: 'void' } }, /function_id/],
    ['invokefunction with a numeric invocation_id', { type: 'invokefunction', invocation_id: 42, function_id: 'bi::echo', data: {} }, /invocation_id/],
    ['invocationresult without invocation_id', { type: 'invocationresult', function_id: 'bi::echo', result: 1 }, /invocation_id/],
  ])('%s gets an invalid_frame error frame and registers nothing', async (_name, frame, reason) => {
    await start();
    const client = await raw();
    const triggersBefore = await listedTriggers(client);
    client.send(frame);
    const error = await client.next((f) => f.type === 'error');
    expect(error.error).toEqual({ code: 'invalid_frame', message: expect.stringMatching(reason) });
    expect(client.open).toBe(true);
    expect(await listedFunctions(client)).toEqual([]);
    expect(await listedTriggers(client)).toEqual(triggersBefore);
    expect(eng().stats().functions).toBe(eng().listFunctions(true).length);
  });

  it.each<[string, Frame, RegExp]>([
    ['invokefunction without function_id', { type: 'invokefunction', data: {} }, /function_id/],
    ['a numeric function_id', { type: 'invokefunction', function_id: 17, data: {} }, /function_id/],
    ['action "void" as a string', { type: 'invokefunction', function_id: 'bi::echo', data: { ok: true }, action: 'void' }, /action/],
    ['an unknown action type', { type: 'invokefunction', function_id: 'bi::echo', data: {}, action: { type: 'later' } }, /action/],
    ['an enqueue action without queue', { type: 'invokefunction', function_id: 'bi::echo', data: {}, action: { type: 'enqueue' } }, /queue/],
    ['timeout_ms: -1', { type: 'invokefunction', function_id: 'bi::echo', data: {}, timeout_ms: -1 }, /timeout_ms/],
    ['timeout_ms as a string', { type: 'invokefunction', function_id: 'bi::echo', data: {}, timeout_ms: '100' }, /timeout_ms/],
    ['a numeric traceparent', { type: 'invokefunction', function_id: 'bi::echo', data: {}, traceparent: 1 }, /traceparent/],
  ])('invokefunction with %s is answered with an invocationresult carrying invalid_frame', async (_name, frame, reason) => {
    await start();
    const { check } = await echoPair();
    const client = await raw();
    const invocationId = randomUUID();
    client.send({ ...frame, invocation_id: invocationId });
    const answer = await client.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId);
    expect(answer.error).toEqual({ code: 'invalid_frame', message: expect.stringMatching(reason) });
    expect(answer.result).toBeUndefined();
    expect(client.open).toBe(true);
    // Exactly one answer, and no error frame on top of it.
    await barrier(client);
    expect(client.unread.filter((f) => f.invocation_id === invocationId || f.type === 'error')).toEqual([]);
    await check();
  });

  it.each<[string, string, string]>([
    ['with whitespace', 'bi echo', 'Invalid function id "bi echo": must not contain whitespace or control characters'],
    ['that is empty', '', 'Invalid function id "": must not be empty'],
    ['of 300 characters', 'x'.repeat(300), `Invalid function id "${'x'.repeat(64)}…": must be at most 256 characters`],
  ])('invokefunction with a function_id %s is answered with invalid_function_id naming the rule', async (_name, functionId, message) => {
    await start();
    const { check } = await echoPair();
    const client = await raw();
    const invocationId = randomUUID();
    client.send({ type: 'invokefunction', invocation_id: invocationId, function_id: functionId, data: {} });
    // The same frame shape as every failed call (iii-sdk reads it as any other error).
    const answer = await client.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId);
    expect(answer).toMatchObject({ function_id: functionId, error: { code: 'invalid_function_id', message } });
    expect(answer.result).toBeUndefined();
    expect(client.open).toBe(true);
    await check();
  });

  it('a Flint worker calling an invalid function id gets a FlintInvocationError with invalid_function_id', async () => {
    await start();
    const caller = await worker('bi-bad-id');
    const err = await caller.trigger({ function_id: 'bad id', payload: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FlintInvocationError);
    expect(err).toMatchObject({ code: 'invalid_function_id', message: expect.stringContaining('must not contain whitespace') });
  });

  it('an invokefunction whose invocation_id is not a UUID gets an invocationresult with that id and invalid_frame', async () => {
    await start();
    const { check } = await echoPair();
    const client = await raw();
    for (const badId of ['not-a-uuid', '12345', `${randomUUID()}x`, 'x'.repeat(300)]) {
      client.send({ type: 'invokefunction', invocation_id: badId, function_id: 'bi::echo', data: { a: 1 } });
      const answer = await client.next((f) => f.type === 'invocationresult' && f.invocation_id === badId);
      expect(answer).toMatchObject({ function_id: 'bi::echo', error: { code: 'invalid_frame', message: expect.stringMatching(/UUID/) } });
      expect(answer.result).toBeUndefined();
    }
    expect(client.open).toBe(true);
    const ok = await client.invoke('bi::echo', { a: 2 });
    expect(ok.result).toEqual({ a: 2 });
    await check();
  });

  it.each<[string, string]>([
    ['with a space', 'bi::has space'],
    ['with a tab', 'bi::has\ttab'],
    ['with a newline', 'bi::line\nbreak'],
    ['with a control character', 'bi::ctl\u0001'],
    ['of 300 characters', `bi::${'x'.repeat(296)}`],
    ['that is empty', ''],
  ])('registerfunction with an id %s gets an error frame and is not listed', async (_name, id) => {
    await start();
    const client = await raw();
    client.send({ type: 'registerfunction', id });
    const error = await client.next((f) => f.type === 'error');
    const rule = /^Invalid function id ".*": must (not|be at most)/s;
    expect(error.error).toEqual({ code: 'invalid_function_id', message: expect.stringMatching(rule) });
    expect(await listedFunctions(client)).not.toContain(id);
    // A trigger naming such a function breaks the same rule.
    client.send({ type: 'registertrigger', id: randomUUID(), trigger_type: 'engine::functions-available', function_id: id, config: {} });
    const triggerError = await client.next((f) => f.type === 'error');
    expect(triggerError.error).toEqual({ code: 'invalid_function_id', message: expect.stringMatching(rule) });
    expect(
      eng()
        .listFunctions(true)
        .map((f) => f.function_id),
    ).not.toContain(id);
    // 256 characters is the documented maximum and is accepted.
    const longest = `bi::${'y'.repeat(252)}`;
    client.registerFunction(longest);
    expect(await listedFunctions(client)).toContain(longest);
  });
});

describe('hostile frames', () => {
  it('binary frames: undecodable bytes get invalid_frame, JSON in a binary frame is served like text', async () => {
    await start();
    await echoPair();
    const client = await raw();
    client.ws.send(Buffer.from([0xff, 0xfe, 0x00, 0x7b]), { binary: true });
    const error = await client.next((f) => f.type === 'error');
    expect(error.error).toMatchObject({ code: 'invalid_frame' });
    const id = randomUUID();
    client.ws.send(Buffer.from(JSON.stringify({ type: 'invokefunction', invocation_id: id, function_id: 'bi::echo', data: { bin: true } })), { binary: true });
    const answer = await client.next((f) => f.type === 'invocationresult' && f.invocation_id === id);
    expect(answer.result).toEqual({ bin: true });
  });

  it('an invocationresult from a connection that is not executing the call is ignored; the real result is delivered', async () => {
    await start();
    const provider = await raw();
    provider.send({ type: 'registerfunction', id: 'sp::f' });
    await barrier(provider);
    const caller = await raw();
    const spoofer = await raw();
    const callId = randomUUID();
    caller.send({ type: 'invokefunction', invocation_id: callId, function_id: 'sp::f', data: {} });
    const invocation = await provider.next((f) => f.type === 'invokefunction' && f.function_id === 'sp::f');
    for (const forgedId of [invocation.invocation_id, callId]) {
      spoofer.send({ type: 'invocationresult', invocation_id: forgedId, function_id: 'sp::f', result: 'forged' });
    }
    await barrier(spoofer);
    provider.send({ type: 'invocationresult', invocation_id: invocation.invocation_id, function_id: 'sp::f', result: 'real' });
    const answer = await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === callId);
    expect(answer.result).toBe('real');
    await barrier(caller);
    expect(caller.unread.filter((f) => f.invocation_id === callId)).toEqual([]);
  });

  it("an invocationresult whose id only resembles the call's (upper case, a stray character, another sequence) is ignored", async () => {
    await start();
    const provider = await raw();
    provider.send({ type: 'registerfunction', id: 'near::f' });
    await barrier(provider);
    const caller = await raw();
    // Calls until the engine's id for one has a letter in its counter (the last 12 digits), so that an
    // upper-case copy differs from it only in case.
    let id: string | undefined;
    let callId = '';
    for (let i = 0; i < 40 && id === undefined; i++) {
      callId = randomUUID();
      caller.send({ type: 'invokefunction', invocation_id: callId, function_id: 'near::f', data: {} });
      const frame = await provider.next((f) => f.type === 'invokefunction' && f.invocation_id !== undefined);
      const engineId = String(frame.invocation_id);
      if (/[a-f]/.test(engineId.slice(24))) id = engineId;
      else provider.send({ type: 'invocationresult', invocation_id: engineId, function_id: 'near::f', result: 'skip' });
    }
    if (id === undefined) throw new Error('no engine invocation id with a letter in its counter');
    const near = [
      id.slice(0, 24) + id.slice(24).toUpperCase(),
      `${id.slice(0, 35)}:`,
      `${id.slice(0, 35)}g`,
      `${id.slice(0, 24)} ${id.slice(25)}`,
      `${id.slice(0, 24)}ffffffffffff`,
      `${id[0] === '0' ? '1' : '0'}${id.slice(1)}`,
      `${id}0`,
    ];
    for (const forged of near) provider.send({ type: 'invocationresult', invocation_id: forged, function_id: 'near::f', result: 'near' });
    await barrier(provider);
    provider.send({ type: 'invocationresult', invocation_id: id, function_id: 'near::f', result: 'real' });
    const answer = await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === callId);
    expect(answer.result).toBe('real');
  });

  // 10,000 levels of nesting fit in a 20 KB frame; JSON.parse takes them, a recursive walk or
  // JSON.stringify of the parsed value overflows the stack (from about 5,000 levels on).
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('a call whose data is nested 10,000 levels deep gets one error answer; the engine keeps serving and leaks nothing', async () => {
    await start();
    const { check } = await echoPair();
    const client = await raw();
    const id = randomUUID();
    client.send(`{"type":"invokefunction","invocation_id":"${id}","function_id":"bi::echo","data":${deep(10_000)}}`);
    const answer = await client.next((f) => f.type === 'invocationresult' && f.invocation_id === id, 3000);
    expect(answer.error).toMatchObject({ code: expect.stringMatching(/^(invalid_frame|invalid_payload)$/) });
    expect(client.open).toBe(true);
    expect((await client.invoke('bi::echo', { after: 'deep' })).result).toEqual({ after: 'deep' });
    await check();
    expect(eng().stats().pendingInvocations).toBe(0);
  });

  it('an in-process call whose data cannot be serialised for the worker fails with invalid_payload; the next call works', async () => {
    await start();
    await echoPair();
    await expect(eng().invoke('bi::echo', { n: 10n })).rejects.toMatchObject({ code: 'invalid_payload' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(eng().invoke('bi::echo', cyclic)).rejects.toMatchObject({ code: 'invalid_payload' });
    expect(await eng().invoke('bi::echo', { after: 'bad payloads' })).toEqual({ after: 'bad payloads' });
    expect(eng().stats().pendingInvocations).toBe(0);
  });

  it('a function registered with metadata nested 10,000 levels deep does not break engine::functions::list', async () => {
    await start();
    const { check } = await echoPair();
    const client = await raw();
    client.send(`{"type":"registerfunction","id":"bi::deep","metadata":{"x":${deep(10_000)}}}`);
    const other = await raw();
    const listing = await other.invoke(EngineFunctions.LIST_FUNCTIONS, {}, {}, 3000);
    expect(listing.error).toBeUndefined();
    expect((listing.result as { functions: FunctionInfo[] }).functions.map((f) => f.function_id)).toContain('bi::echo');
    await check();
  });
});

describe('oversized frames', () => {
  const limit = 64 * KiB;

  it('a frame just under bridge.max_frame_bytes is accepted', async () => {
    await start({ bridge: { port: 0, max_frame_bytes: limit } });
    await echoPair();
    const client = await raw();
    const data = { blob: 'a'.repeat(limit - 200) };
    const answer = await client.invoke('bi::echo', data);
    expect(answer.error).toBeUndefined();
    expect((answer.result as { blob: string }).blob).toHaveLength(limit - 200);
  });

  it('a frame over bridge.max_frame_bytes closes that connection with 1009 and a reason; other workers keep working', async () => {
    await start({ bridge: { port: 0, max_frame_bytes: limit } });
    const { check } = await echoPair();
    const bystander = await raw();
    const offender = await raw();
    const workersBefore = eng().stats().workers;
    offender.send({ type: 'invokefunction', invocation_id: randomUUID(), function_id: 'bi::echo', data: { blob: 'b'.repeat(limit + 10) } });
    const closed = await offender.whenClosed();
    expect(closed.code).toBe(1009);
    await waitFor(() => eng().stats().workers === workersBefore - 1, 5000, 'the offending connection to be removed');
    // The engine keeps serving: SDK workers and the other raw connection.
    await check();
    expect((await bystander.invoke('bi::echo', { still: 'here' })).result).toEqual({ still: 'here' });
    // A clear close reason tells the worker what happened (design.md §5, "Bad frames").
    expect(closed.reason, 'close reason of an oversized frame').not.toBe('');
  });

  it('a text frame that is not UTF-8 closes that connection with 1007, a frame breaking the WebSocket protocol with 1002, each with its reason', async () => {
    await start({ bridge: { port: 0 } });
    const { check } = await echoPair();
    const badText = await RawClient.connect(eng().bridgeUrl);
    badText.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await badText.closed).toEqual({ code: 1007, reason: closeReason(1007) });
    const unmasked = await RawClient.connect(eng().bridgeUrl);
    // A client's frames must be masked (RFC 6455 §5.1): this one, a text frame "A", is not.
    (unmasked.ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(Buffer.from([0x81, 0x01, 0x41]));
    expect(await unmasked.closed).toEqual({ code: 1002, reason: closeReason(1002) });
    await check();
  });
});

describe('floods and back-pressure', () => {
  it('a flood of 10,000 calls to a slow function: one answer each, other workers answered promptly, nothing pending after', async () => {
    const limit = 500;
    await start({ max_invocations_per_worker: limit });
    const { check, caller } = await echoPair();
    const slow = await worker('bi-slow');
    slow.registerFunction('bi::slow', async (input: unknown) => {
      await sleep(200);
      return input;
    });
    await waitFor(
      () =>
        eng()
          .listFunctions()
          .some((f) => f.function_id === 'bi::slow'),
      5000,
      'bi::slow to be registered',
    );

    const flooder = await raw();
    flooder.keepFrames = false;
    const total = 10_000;
    const ids: string[] = Array.from({ length: total }, () => randomUUID());
    const wanted = new Set(ids);
    const answers = new Map<string, Frame[]>();
    const strays: Frame[] = [];
    flooder.onFrame = (f) => {
      if (f.type !== 'invocationresult' || typeof f.invocation_id !== 'string' || !wanted.has(f.invocation_id)) {
        if (f.type !== 'invocationresult' || !String(f.function_id).startsWith('engine::')) strays.push(f);
        return;
      }
      const list = answers.get(f.invocation_id) ?? [];
      list.push(f);
      answers.set(f.invocation_id, list);
    };

    // Another worker keeps calling while the flood runs.
    const latencies: number[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const t0 = performance.now();
        await expect(caller.trigger({ function_id: 'bi::echo', payload: { t0 }, timeoutMs: 5000 })).resolves.toEqual({ t0 });
        latencies.push(performance.now() - t0);
        await sleep(10);
      }
    })();

    // As fast as the socket takes them; a turn of the event loop every 200 frames, because the flooding
    // client shares this process (and its event loop) with the engine and the other workers.
    const floodStart = performance.now();
    for (const [i, id] of ids.entries()) {
      flooder.send({ type: 'invokefunction', invocation_id: id, function_id: 'bi::slow', data: { i } });
      if (i % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
    }
    const floodSentMs = performance.now() - floodStart;
    await waitFor(
      () => answers.size === total,
      30_000,
      () => `answers to all ${total} calls (have ${answers.size})`,
      50,
    );
    await sleep(300); // any duplicate answer would arrive by now
    probing = false;
    await prober;

    const codes = new Map<string, number>();
    let duplicates = 0;
    for (const [id, list] of answers) {
      if (list.length !== 1) duplicates++;
      const f = list[0] as Frame;
      const code = f.error ? (f.error as { code: string }).code : 'ok';
      codes.set(code, (codes.get(code) ?? 0) + 1);
      if (code === 'ok') expect(f.result).toEqual({ i: ids.indexOf(id) });
    }
    expect(duplicates).toBe(0);
    expect([...codes.keys()].sort()).toEqual(['ok', 'too_many_invocations']);
    expect(codes.get('ok')).toBeGreaterThanOrEqual(limit);
    expect((codes.get('ok') ?? 0) + (codes.get('too_many_invocations') ?? 0)).toBe(total);
    expect(strays).toEqual([]);

    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length / 2)] as number;
    const max = latencies[latencies.length - 1] as number;
    expect(latencies.length).toBeGreaterThan(5);
    expect(p50, `median latency of another worker's calls during the flood (max ${max.toFixed(0)} ms)`).toBeLessThan(100);
    expect(
      max,
      `slowest call of another worker during the flood (all ${total} sent in ${floodSentMs.toFixed(0)} ms; latencies ${latencies.map((l) => l.toFixed(0)).join(',')})`,
    ).toBeLessThan(1000);
    expect(eng().stats().pendingInvocations).toBe(0);
    await check();
  }, 60_000);

  it('a worker that never reads gets worker_overloaded instead of unbounded buffering; other workers keep working', async () => {
    const maxOutbound = 64 * KiB;
    await start({ bridge: { port: 0, max_outbound_buffer_bytes: maxOutbound }, invocation_timeout_ms: 20_000 });
    const { check, caller } = await echoPair();
    const sink = await raw();
    sink.registerFunction('bp::sink', () => 'never answered: the socket is paused');
    await barrier(sink);
    // Stop reading: frames pile up in the kernel, then in the engine's socket buffer.
    (sink.ws as unknown as { _socket: { pause(): void } })._socket.pause();

    const payload = { blob: 'p'.repeat(128 * KiB) };
    const rssBefore = process.memoryUsage().rss;
    const outcomes: Promise<string>[] = [];
    let overloaded = 0;
    const callOnce = () => {
      const p = caller.trigger({ function_id: 'bp::sink', payload, timeoutMs: 20_000 }).then(
        () => 'ok',
        (err: unknown) => (err instanceof FlintInvocationError ? err.code : String(err)),
      );
      void p.then((code) => {
        if (code === 'worker_overloaded') overloaded++;
      });
      outcomes.push(p);
    };
    // Send 128 KiB calls until the engine starts refusing, then 50 more: all of those are refused too.
    for (let i = 0; i < 2000 && overloaded === 0; i++) {
      callOnce();
      if (i % 10 === 9) await sleep(5);
    }
    await waitFor(() => overloaded > 0, 10_000, 'a worker_overloaded answer');
    // Keep pushing: the socket drains into the kernel until the kernel's buffers are full too, after
    // which every call is refused. 50 calls in a row refused shows the engine has stopped taking work.
    let refusedInARow = 0;
    for (let i = 0; i < 2000 && refusedInARow < 50; i++) {
      const before = overloaded;
      callOnce();
      // A refusal comes back within a round trip; an accepted call never does (nobody reads it).
      const deadline = Date.now() + 100;
      while (overloaded === before && Date.now() < deadline) await sleep(1);
      refusedInARow = overloaded > before ? refusedInARow + 1 : 0;
    }
    expect(refusedInARow, 'calls refused in a row once the worker stopped reading').toBe(50);

    // Bounded: what the engine took on for the stuck worker is what the kernel and the 64 KiB cap hold.
    const accepted = eng().stats().pendingInvocations;
    expect(accepted * 128 * KiB, `${accepted} calls accepted for a worker that never reads`).toBeLessThan(48 * 1024 * KiB);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * KiB);
    // Calls to other workers still succeed.
    await check();
    await check();

    // When the stuck worker goes away, its accepted calls end with invocation_stopped.
    sink.terminate();
    const settled = await Promise.all(outcomes);
    const counts = new Map<string, number>();
    for (const code of settled) counts.set(code, (counts.get(code) ?? 0) + 1);
    expect(
      [...counts.keys()].every((c) => c === 'worker_overloaded' || c === 'invocation_stopped'),
      JSON.stringify([...counts]),
    ).toBe(true);
    expect(counts.get('invocation_stopped') ?? 0).toBe(accepted);
    await waitFor(() => eng().stats().pendingInvocations === 0, 5000, 'pending invocations to drain');
    await check();
  }, 60_000);
});

describe('HTTP on the bridge port', () => {
  const httpGet = (url: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('upgrade', () => reject(new Error('unexpected upgrade')));
      req.on('error', reject);
      req.end();
    });

  it('a plain HTTP GET gets 426 with a JSON body carrying a code', async () => {
    await start();
    const url = eng().bridgeUrl.replace(/^ws:/, 'http:');
    for (const path of ['/', '/anything']) {
      const res = await httpGet(`${url}${path}`);
      expect(res.status).toBe(426);
      expect(String(res.headers['content-type'])).toMatch(/application\/json/);
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String), code: 'upgrade_required' });
    }
  });

  it('a WebSocket upgrade on an unknown path gets 404 with a JSON body', async () => {
    await start();
    const url = eng().bridgeUrl.replace(/^ws:/, 'http:');
    const res = await httpGet(`${url}/not-a-bridge-path`, {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': Buffer.from(randomUUID().slice(0, 16)).toString('base64'),
    });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ error: expect.stringContaining('/not-a-bridge-path'), code: 'not_found' });
    // And the engine still accepts workers.
    const client = await raw();
    expect((await barrier(client)).error).toBeUndefined();
  });
});

describe('engine lifecycle leaks', () => {
  it('starting and stopping engines leaves no listeners behind on process.stdout', async () => {
    const events = ['close', 'finish', 'error', 'end'] as const;
    const count = () => events.reduce((n, e) => n + process.stdout.listenerCount(e), 0);
    // One warm-up engine, so lazily created shared state is not counted.
    await (await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' } } })).stop();
    const before = count();
    for (let i = 0; i < 3; i++) {
      const e = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' } } });
      await e.stop();
    }
    expect(count() - before, 'listeners added to process.stdout by 3 engine start/stop cycles').toBe(0);
  });
});
