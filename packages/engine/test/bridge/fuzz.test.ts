/**
 * Fuzzing the bridge over real sockets (fast-check, issue #16):
 *
 * (a) random bytes and random text frames on a worker connection,
 * (b) hostile but well-formed frames (ids of 300 characters or with control characters, deeply nested
 *     configs, non-UUID invocation ids, wrong types, payloads just under and just over the frame cap),
 *     and a hostile provider answering a well-behaved caller,
 * (c) garbled HTTP upgrade requests on raw TCP, against the bridge and the flint-stream listener.
 *
 * Each frame must be answered or ignored as docs/bridge.md ("Bad input") says: an `error` frame, or an
 * `invocationresult` carrying the error when it had an `invocation_id`; the connection stays open except
 * for an oversized frame (1009). Each upgrade request is answered with an HTTP status or closed, never
 * left hanging. After each batch a separate well-behaved @flint/sdk worker can still register and call
 * a function, and nothing crashed: (a) and (b) run against an in-process engine (an uncaught error
 * fails the run: vitest reports it, and the property fails at the run that raised it); (c) runs against
 * an engine process (support/fuzz/engine-process.mjs), where a crash ends the process.
 *
 * Bounded: each property stops after its time limit (about 30 s for the file). `FUZZ_SEED=<n>` replays;
 * on a failure fast-check prints the seed and the path of the shrunk counterexample.
 *
 * Engine bugs this fuzzing found (now fixed) keep a test each with their minimal counterexample, and the
 * general properties cover their inputs too.
 */
import { randomUUID } from 'node:crypto';
import { TextDecoder } from 'node:util';
import type { Engine } from '@flint/engine';
import { TELEMETRY_PREFIXES, decodeEngineFrame } from '@flint/protocol';
import { type Worker, registerWorker } from '@flint/sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanup } from '../support/cleanup.js';
import { type FuzzEngineProcess, spawnFuzzEngine } from '../support/fuzz/child.js';
import { type Frame, answerProblems, expectedAnswers, hostileFrameText, hostileValue, withKey } from '../support/fuzz/frames.js';
import { type RawRequest, exchange, rawRequest } from '../support/fuzz/http.js';
import { CrashWatch, fuzzParams } from '../support/fuzz/params.js';
import { startTestEngine } from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { uid, waitFor, within } from '../support/util.js';

const quiet = { warn: () => {}, error: () => {}, debug: () => {} };
/** bridge.max_frame_bytes of the in-process engine: small, so "just under the cap" stays cheap. */
const CAP = 128 * 1024;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/**
 * The engine at `url` still serves: a fresh @flint/sdk worker registers a function and a second one
 * calls it (the engine keeps serving others).
 */
async function assertServing(url: string): Promise<void> {
  const id = uid('fz-ok');
  const provider = registerWorker(url, { workerName: uid('fz-provider'), log: quiet, reconnect: { maxRetries: 0 } });
  const caller = registerWorker(url, { workerName: uid('fz-caller'), log: quiet, reconnect: { maxRetries: 0 } });
  try {
    provider.registerFunction(id, (input: unknown) => ({ echoed: input }));
    await within(Promise.all([provider.waitConnected(), caller.waitConnected()]), 5000, 'the well-behaved workers to connect');
    const payload = { n: randomUUID() };
    const answer = await waitFor(
      async () => {
        try {
          return await caller.trigger({ function_id: id, payload, timeoutMs: 2000 });
        } catch (err) {
          if ((err as { code?: string }).code === 'function_not_found') return undefined; // its registration is still on its way
          throw err;
        }
      },
      5000,
      `${id} to answer a well-behaved caller`,
    );
    expect(answer).toEqual({ echoed: payload });
  } finally {
    await Promise.all([provider.shutdown(), caller.shutdown()]);
  }
}

/** Every frame the engine sent decodes as an engine frame (what the SDKs accept). */
function undecodable(frames: readonly Frame[]): string[] {
  return frames
    .filter((f) => f.type === '<non-json>' || !decodeEngineFrame(JSON.stringify(f)).ok)
    .map((f) => `the engine sent a frame a worker cannot decode: ${JSON.stringify(f).slice(0, 200)}`);
}

type Sent = { kind: 'text'; text: string } | { kind: 'binary'; bytes: Buffer } | { kind: 'text-bytes'; bytes: Buffer };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const isUtf8 = (b: Buffer) => {
  try {
    utf8.decode(b);
    return true;
  } catch {
    return false;
  }
};

/**
 * What the engine reads from each frame, in order, up to the first text frame that is not UTF-8 (the
 * connection is failed there, RFC 6455 §8.1): the text it decodes, or nothing (a telemetry frame).
 */
function readAs(frames: readonly Sent[]): { texts: string[]; badUtf8: boolean } {
  const texts: string[] = [];
  for (const f of frames) {
    if (f.kind === 'text') texts.push(f.text);
    else if (f.kind === 'binary') {
      if (!(TELEMETRY_PREFIXES as readonly string[]).includes(f.bytes.subarray(0, 4).toString('latin1'))) texts.push(f.bytes.toString('utf8'));
    } else if (!isUtf8(f.bytes)) return { texts, badUtf8: true };
    else texts.push(f.bytes.toString('utf8'));
  }
  return { texts, badUtf8: false };
}

/**
 * Sends `frames` on a fresh worker connection and checks the engine's answers against the oracle
 * (support/fuzz/frames.ts): every frame answered or ignored as documented, nothing else said, the
 * connection still open. Returns the problems found (empty when none).
 */
async function sendBatch(url: string, frames: readonly Sent[], watch: CrashWatch): Promise<string[]> {
  const client = await RawClient.connect(url);
  try {
    await client.registered();
    const { texts, badUtf8 } = readAs(frames);
    const expected = expectedAnswers(texts);
    for (const f of frames) {
      if (f.kind === 'text') client.send(f.text);
      else if (f.kind === 'binary') client.sendBinary(f.bytes);
      else client.ws.send(f.bytes, { binary: false });
    }
    if (badUtf8) {
      const closed = await client.whenClosed(3000);
      watch.check();
      return closed.code === 1007 ? [] : [`a text frame that is not UTF-8 closed the connection with ${closed.code}, expected 1007`];
    }
    // Two barriers: every owed answer has come (pongs are counted), then one more round trip for strays.
    const answers = () => client.frames.filter((f) => f.type !== 'workerregistered');
    const pongs = () => answers().filter((f) => f.type === 'pong').length;
    client.send({ type: 'ping' });
    const owed = [...expected.results.values(), ...expected.triggerResults.values()].reduce((a, b) => a + b, 0) + expected.frameErrors.length;
    await waitFor(
      () => client.isClosed || (pongs() >= expected.pongs + 1 && answers().filter((f) => f.type !== 'pong').length >= owed),
      5000,
      'the answers',
    ).catch(() => {});
    client.send({ type: 'ping' });
    await waitFor(() => client.isClosed || pongs() >= expected.pongs + 2, 3000, 'the last pong').catch(() => {});
    watch.check();
    if (client.isClosed) return [`the connection was closed: ${JSON.stringify(client.closeInfo)}`];
    const received = answers();
    const lastPong = received.map((f) => f.type).lastIndexOf('pong');
    return [
      ...answerProblems(
        expected,
        received.filter((_, i) => i !== lastPong),
      ),
      ...undecodable(received),
    ];
  } finally {
    await client.close();
  }
}

const fail = (problems: string[], what: unknown) => {
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\nfor ${typeof what === 'string' ? what : JSON.stringify(what).slice(0, 2000)}`);
};

// ---------------------------------------------------------------------------------------------
// (a), (b): frames on worker connections of an in-process engine
// ---------------------------------------------------------------------------------------------

describe('bridge fuzz: frames on a worker connection', () => {
  const watch = new CrashWatch();
  let engine: Engine;

  beforeAll(async () => {
    watch.start();
    engine = await startTestEngine({
      bridge: { max_frame_bytes: CAP },
      modules: [{ name: 'flint-http', config: { port: 0 } }, { name: 'flint-state' }],
    });
  });

  afterAll(async () => {
    try {
      await cleanup();
    } finally {
      watch.stop();
    }
    watch.check();
  });

  it('(a) random bytes and random text: every frame answered as documented, the connection stays open', async () => {
    const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
    const sent: fc.Arbitrary<Sent> = fc.oneof(
      w(
        4,
        fc.string({ maxLength: 200 }).map((text) => ({ kind: 'text' as const, text })),
      ),
      w(
        4,
        fc.string({ unit: 'binary', maxLength: 200 }).map((text) => ({ kind: 'text' as const, text })),
      ),
      w(
        4,
        fc.json({ maxDepth: 4 }).map((text) => ({ kind: 'text' as const, text })),
      ),
      w(
        4,
        fc.uint8Array({ maxLength: 400 }).map((b) => ({ kind: 'binary' as const, bytes: Buffer.from(b) })),
      ),
      w(
        2,
        fc
          .tuple(fc.constantFrom(...TELEMETRY_PREFIXES), fc.uint8Array({ maxLength: 100 }))
          .map(([p, b]) => ({ kind: 'binary' as const, bytes: Buffer.concat([Buffer.from(p), b]) })),
      ),
      // Text frames of raw bytes: mostly not UTF-8, which fails the connection (1007), so rarer.
      w(
        1,
        fc.uint8Array({ minLength: 1, maxLength: 100 }).map((b) => ({ kind: 'text-bytes' as const, bytes: Buffer.from(b) })),
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(sent, { minLength: 1, maxLength: 8 }), async (frames) => fail(await sendBatch(engine.bridgeUrl, frames, watch), frames)),
      fuzzParams(300, 3500),
    );
    await assertServing(engine.bridgeUrl);
  });

  it('(b) hostile but well-formed frames: answered or ignored as documented, the connection stays open', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostileFrameText, { minLength: 1, maxLength: 6 }), async (texts) =>
        fail(
          await sendBatch(
            engine.bridgeUrl,
            texts.map((text) => ({ kind: 'text', text })),
            watch,
          ),
          texts.map((t) => (t.length > 400 ? `${t.slice(0, 400)}…(${t.length} chars)` : t)),
        ),
      ),
      fuzzParams(400, 5000),
    );
    await assertServing(engine.bridgeUrl);
  });

  // The oracle's own bug, found by (b) (seed 1900499208): a hostile id can be both the type of a trigger
  // and a type the same client then provides, and the engine rightly forwards the waiting trigger to it.
  it('(b) a trigger whose type the same client then provides is forwarded to it, and the oracle allows that', async () => {
    const type = '__proto__';
    const texts = [
      JSON.stringify({ type: 'registertrigger', id: `fzt-${randomUUID()}`, trigger_type: type, function_id: 'fzf-.' }),
      JSON.stringify({ type: 'registertriggertype', id: type }),
    ];
    expect(
      await sendBatch(
        engine.bridgeUrl,
        texts.map((text) => ({ kind: 'text', text })),
        watch,
      ),
    ).toEqual([]);
    const client = await RawClient.connect(engine.bridgeUrl);
    await client.registered();
    for (const text of texts) client.send(text);
    const forwarded = await client.waitFrame((f) => f.type === 'registertrigger', 3000);
    expect(forwarded).toMatchObject({ trigger_type: type, function_id: 'fzf-.' });
    await client.close();
    await assertServing(engine.bridgeUrl);
  });

  it('(b) a frame up to bridge.max_frame_bytes is answered; one over it closes only that connection with 1009', async () => {
    const frameOfSize = (size: number, kind: string, id: string): string => {
      const head =
        kind === 'call'
          ? `{"type":"invokefunction","invocation_id":"${id}","function_id":"fzx-cap","data":"`
          : kind === 'register'
            ? `{"type":"registertrigger","id":"fzt-${id}","trigger_type":"fzp-cap","function_id":"fzf-cap","config":{"v":"`
            : '{"type":"nope","x":"';
      const tail = kind === 'register' ? '"}}' : '"}';
      return head + 'x'.repeat(size - head.length - tail.length) + tail;
    };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -64, max: 64 }), fc.constantFrom('call', 'register', 'unknown'), async (delta, kind) => {
        const text = frameOfSize(CAP + delta, kind, randomUUID());
        expect(Buffer.byteLength(text)).toBe(CAP + delta);
        if (delta <= 0) return fail(await sendBatch(engine.bridgeUrl, [{ kind: 'text', text }], watch), `${kind} frame of ${CAP + delta} bytes`);
        const client = await RawClient.connect(engine.bridgeUrl);
        await client.registered();
        client.send(text);
        expect(await client.whenClosed(3000)).toEqual({ code: 1009, reason: `frame exceeds bridge.max_frame_bytes (${CAP} bytes)` });
        watch.check();
      }),
      fuzzParams(40, 3000),
    );
    await assertServing(engine.bridgeUrl);
  });

  describe('a hostile provider answering a well-behaved caller', () => {
    let provider: RawClient;
    let caller: Worker;
    let answerWith: (call: Frame) => Frame = () => ({});
    const FN = 'fzh::provided';

    beforeAll(async () => {
      provider = await RawClient.connect(engine.bridgeUrl);
      await provider.registered();
      provider.keepFrames = false;
      provider.onFrame = (f) => {
        if (f.type === 'invokefunction' && f.function_id === FN) provider.send(answerWith(f));
      };
      provider.send({ type: 'registerfunction', id: FN });
      caller = registerWorker(engine.bridgeUrl, { workerName: uid('fz-caller'), log: quiet });
      await caller.waitConnected();
      await waitFor(() => engine.listFunctions().some((f) => f.function_id === FN), 3000, `${FN} to be listed`);
    });

    afterAll(async () => {
      await caller.shutdown();
      await provider.close();
    });

    /** A well-formed `invocationresult` for `call` with hostile contents (a result or error of any shape, odd extra fields). */
    const hostileAnswer = fc.record({
      result: fc.option(fc.oneof(hostileValue, fc.jsonValue()), { nil: undefined }),
      error: fc.option(
        fc.oneof(
          fc.constant(null),
          fc.dictionary(fc.constantFrom('code', 'message', 'stacktrace', 'cause', '__proto__', 'constructor'), hostileValue, { maxKeys: 4 }),
          fc.record({
            code: fc.string(),
            message: fc.string(),
            cause: fc.option(hostileValue, { nil: undefined }),
            stacktrace: fc.option(hostileValue, { nil: undefined }),
          }),
        ),
        { nil: undefined, freq: 2 },
      ),
      function_id: fc.option(hostileValue, { nil: undefined }),
      traceparent: fc.option(fc.oneof(fc.string(), hostileValue), { nil: undefined }),
      baggage: fc.option(fc.oneof(fc.string(), hostileValue), { nil: undefined }),
      extra: fc.option(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'message_type'), hostileValue), { nil: undefined }),
    });

    type Answer = typeof hostileAnswer extends fc.Arbitrary<infer A> ? A : never;

    const answerFrame = (call: Frame, a: Frame): Frame => {
      const frame: Frame = { type: 'invocationresult', invocation_id: call.invocation_id };
      for (const k of ['result', 'error', 'function_id', 'traceparent', 'baggage']) if (a[k] !== undefined) frame[k] = a[k];
      if (a.extra) withKey(frame, a.extra[0], a.extra[1]);
      return frame;
    };

    /** Calls FN through the SDK while the provider answers with `answer`: the caller's outcome. */
    async function callWith(answer: Frame, timeoutMs: number): Promise<{ ok: true; value: unknown } | { ok: false; code: unknown; message: string }> {
      answerWith = (call) => answerFrame(call, answer);
      try {
        return { ok: true, value: await caller.trigger({ function_id: FN, payload: { n: randomUUID() }, timeoutMs }) };
      } catch (err) {
        const e = err as { code?: unknown; message?: string };
        return { ok: false, code: e.code, message: String(e.message) };
      }
    }

    it('(b) the caller gets exactly the answer the provider gave (a result, or an error with a string code), never a hang', async () => {
      await fc.assert(
        fc.asyncProperty(hostileAnswer, async (answer) => {
          const outcome = await callWith(answer, 3000);
          watch.check();
          if (answer.error === undefined || answer.error === null) {
            expect(outcome).toEqual({ ok: true, value: answer.result === undefined ? null : JSON.parse(JSON.stringify(answer.result)) });
          } else {
            expect(outcome.ok).toBe(false);
            if (!outcome.ok) {
              expect(typeof outcome.code).toBe('string');
              expect(outcome.code).not.toBe('invocation_timeout');
            }
          }
        }),
        fuzzParams(150, 3000),
      );
      await assertServing(engine.bridgeUrl);
    });

    // Found by this fuzzing (fixed): a provider's non-string traceparent/baggage was relayed to the caller,
    // whose SDK refused the whole result and waited for its time-out. Minimal counterexample: the provider
    // answers {"type":"invocationresult","invocation_id":…,"traceparent":0}.
    it('(b) a provider answering with a non-string traceparent: the caller still gets the result', async () => {
      await fc.assert(
        fc.asyncProperty(hostileAnswer, async (answer) => {
          const outcome = await callWith(answer, 1000);
          expect(outcome).not.toMatchObject({ ok: false, code: 'invocation_timeout' });
        }),
        fuzzParams<[Answer]>(1, 3000, {
          endOnFailure: true,
          examples: [[{ result: undefined, error: undefined, function_id: undefined, traceparent: 0, baggage: undefined, extra: undefined }]],
        }),
      );
    });

    // Found by this fuzzing (fixed): the invocation id of a frame nested deeper than 256 levels was looked
    // for in its first 4,096 characters only; @flint/sdk writes `data` before `invocation_id`, so such a
    // call got a bare `error` frame and `trigger()` hung until its time-out.
    it('(b) an @flint/sdk call whose payload nests too deep and takes over 4 KiB is refused with invalid_frame', async () => {
      let deep: unknown = 0;
      for (let i = 0; i < 300; i++) deep = [deep];
      const outcome = await caller.trigger({ function_id: FN, payload: { pad: 'x'.repeat(4096), deep }, timeoutMs: 1000 }).then(
        () => ({ code: 'none' }),
        (err: { code?: string }) => ({ code: err.code }),
      );
      expect(outcome).toEqual({ code: 'invalid_frame' });
    });
  });
});

// ---------------------------------------------------------------------------------------------
// (c): garbled upgrade requests on raw TCP, against an engine process
// ---------------------------------------------------------------------------------------------

/** Statuses a listener may answer an upgrade request with (docs/errors.md; node:http's own 400/408/431/505). */
const UPGRADE_STATUSES = new Set([101, 400, 403, 404, 405, 408, 413, 426, 431, 501, 505]);

describe('upgrade fuzz: garbled HTTP upgrade requests on raw TCP', () => {
  let proc: FuzzEngineProcess | undefined;

  /** The engine process, started again if a crash ended it (so that shrinking can go on). */
  async function engineProcess(): Promise<FuzzEngineProcess> {
    if (!proc?.alive()) proc = await spawnFuzzEngine();
    return proc;
  }

  beforeAll(async () => {
    await engineProcess();
  });

  afterAll(async () => {
    await proc?.stop();
  });

  /** A plain client of `listener` still connects: a worker gets `workerregistered`, a stream client an open socket. */
  async function stillAccepts(p: FuzzEngineProcess, listener: 'bridge' | 'stream'): Promise<void> {
    if (listener === 'bridge') {
      const client = await RawClient.connect(p.bridgeUrl);
      await client.registered(3000);
      await client.close();
      return;
    }
    const ws = new WebSocket(p.streamUrl, { perMessageDeflate: false });
    await within(
      new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      }),
      3000,
      'a stream client to connect',
    );
    ws.terminate();
  }

  /** Sends `req` to the listener; the problems with what happened (empty when none). */
  async function upgradeProblems(listener: 'bridge' | 'stream', req: RawRequest, timeoutMs = 3000): Promise<string[]> {
    const p = await engineProcess();
    const stderrBefore = p.stderr().length;
    const ex = await exchange(listener === 'bridge' ? p.bridgeUrl : p.streamUrl, req, timeoutMs);
    const problems: string[] = [];
    if (ex.outcome === 'hung') problems.push(`neither answered nor closed within ${timeoutMs} ms`);
    if (ex.outcome === 'answered' && (ex.status === undefined || !UPGRADE_STATUSES.has(ex.status)))
      problems.push(`answered ${JSON.stringify(ex.head.slice(0, 100))}`);
    // A crash shows as the process ending (uncaught exception) or a reported unhandled rejection.
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (!p.alive()) problems.push(`the engine process exited (${JSON.stringify(p.exit())}): ${p.stderr().slice(-1500)}`);
    const stderr = p.stderr().slice(stderrBefore);
    if (stderr.includes('unhandled rejection')) problems.push(`the engine reported: ${stderr.slice(0, 1500)}`);
    if (p.alive()) await stillAccepts(p, listener).catch((err: unknown) => problems.push(`a normal client could not connect afterwards: ${String(err)}`));
    return problems;
  }

  const show = (req: RawRequest) => ({
    target: req.target,
    ending: req.ending,
    request: Buffer.concat(req.chunks)
      .toString('latin1')
      .replace(/a{200,}/g, (m) => `a×${m.length}`)
      .slice(0, 1500),
  });

  it('(c) bridge: every upgrade request is answered with an HTTP status or closed, and the engine keeps accepting workers', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (req) => {
        fail(await upgradeProblems('bridge', req), show(req));
      }),
      fuzzParams(300, 4000),
    );
    await assertServing((await engineProcess()).bridgeUrl);
  });

  it('(c) stream listener: every upgrade request is answered with an HTTP status or closed, and it keeps accepting clients', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (req) => {
        fail(await upgradeProblems('stream', req), show(req));
      }),
      fuzzParams(300, 3500),
    );
    const p = await engineProcess();
    await stillAccepts(p, 'stream');
    await assertServing(p.bridgeUrl);
  });

  /** A well-formed upgrade request to `target` (only the target is hostile). */
  const upgradeTo = (target: string): RawRequest => ({
    target,
    upgrade: true,
    chunks: [
      Buffer.from(
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        'latin1',
      ),
    ],
    ending: 'wait',
    truncated: false,
  });

  // Found by this fuzzing (fixed): `new URL(req.url, 'http://bridge')` threw for a target starting with `//`
  // and no valid host (`//[`, `//a:b`, `//`), uncaught, before any access check: one request stopped the engine.
  it('(c) an upgrade to //[ is answered and the engine keeps running', async () => {
    fail(await upgradeProblems('bridge', upgradeTo('//[')), '//[');
  });

  // Found by this fuzzing (fixed): `decodeURIComponent` of a channel id with a malformed escape threw, uncaught.
  it('(c) an upgrade to /ws/channels/%E0?dir=read is answered and the engine keeps running', async () => {
    fail(await upgradeProblems('bridge', upgradeTo('/ws/channels/%E0?dir=read')), '/ws/channels/%E0?dir=read');
  });

  // Found by this fuzzing (fixed): the stream listener's upgrade handler rejected for `//[` (unhandled) and
  // never answered the socket.
  it('(c) an upgrade to //[ on the stream listener is answered', async () => {
    fail(await upgradeProblems('stream', upgradeTo('//['), 1500), '//[');
  });
});
