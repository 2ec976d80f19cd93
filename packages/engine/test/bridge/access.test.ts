/**
 * Who may open a bridge socket: upgrades from web pages (they carry `Origin`) are refused unless the
 * origin is in `bridge.allowed_origins`; with `bridge.auth_token` (or FLINT_BRIDGE_TOKEN) every worker
 * and telemetry socket must present the token (`Authorization: Bearer` or `?token=`). Channel sockets
 * need only their access key. Both SDKs keep working: @flint/sdk with its `token` option, iii-sdk with
 * `?token=` in its URL (channels included).
 */
import { connect } from 'node:net';
import type { Engine } from '@flint/engine';
import { type ChannelRef, EngineFunctions, channelPath } from '@flint/protocol';
import type { Worker as FlintWorker } from '@flint/sdk';
import { Logger as IiiLogger } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, connectWorker, startTestEngine, startWorker, whenAnnounced } from '../support/harness.js';
import { LEVEL, captureLog } from '../support/log-capture.js';
import { RawClient, upgradeRefusal, upgradeStatus } from '../support/raw-client.js';
import { sleep, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const EVIL = { origin: 'https://evil.example' };
const TOKEN = 'bridge-secret-0123456789';

/** A real channel's reader path (made by a connected client), to try upgrades on `/ws/channels/…`. */
async function channelReaderPath(engine: Engine, headers?: Record<string, string>): Promise<string> {
  const raw = await RawClient.connect(engine.bridgeUrl, '/', { headers });
  const refs = (await raw.invoke(EngineFunctions.CREATE_CHANNEL, {})).result as { reader: ChannelRef };
  return channelPath(refs.reader);
}

describe('browser origins', () => {
  it('refuses an upgrade carrying an Origin on /, /otel and /ws/channels/… with 403 origin_not_allowed, and logs it', async () => {
    const capture = captureLog('warn');
    const engine = await startTestEngine({}, { logger: capture.logger });
    const paths = ['/', '/otel', await channelReaderPath(engine)];
    for (const path of paths) {
      const refusal = await upgradeRefusal(engine.bridgeUrl + path, EVIL);
      expect(refusal.status, path).toBe(403);
      expect(refusal.headers['content-type']).toBe('application/json');
      expect(JSON.parse(refusal.body)).toEqual({ code: 'origin_not_allowed', error: 'Origin https://evil.example is not allowed on the bridge' });
    }
    expect(engine.stats().workers).toBe(1); // the client that made the channel
    // One line (a page retrying in a loop must not flood the log); the next one, 10 s on at the earliest, counts the others.
    const logged = capture.records.filter((r) => r.level === LEVEL.warn && r.origin === EVIL.origin);
    expect(logged).toEqual([
      expect.objectContaining({
        path: '/',
        ip: '127.0.0.1',
        not_logged: 0,
        msg: 'refused a bridge connection from a web page: origin https://evil.example is not in bridge.allowed_origins',
      }),
    ]);
  });

  it('a page cannot register a function, so it cannot take half of the calls', async () => {
    const engine = await startTestEngine();
    const worker = await startWorker('flint', engine, (w) => w.registerFunction('hello::world', () => 'real'));
    expect(await upgradeStatus(engine.bridgeUrl, EVIL)).toBe(403);
    for (let i = 0; i < 4; i++) expect(await worker.trigger({ function_id: 'hello::world', payload: {} })).toBe('real');
  });

  it('accepts exactly the origins in bridge.allowed_origins; "*" accepts any', async () => {
    const engine = await startTestEngine({ bridge: { allowed_origins: ['http://localhost:5173'] } });
    const allowed = await RawClient.connect(engine.bridgeUrl, '/', { headers: { origin: 'http://localhost:5173' } });
    expect(await allowed.registered()).toMatch(/^[0-9a-f-]{36}$/);
    for (const origin of ['http://localhost:5174', 'https://localhost:5173', 'http://localhost:5173/', 'null']) {
      expect(await upgradeStatus(engine.bridgeUrl, { origin }), origin).toBe(403);
    }
    const open = await startTestEngine({ bridge: { allowed_origins: ['*'] } });
    const any = await RawClient.connect(open.bridgeUrl, '/', { headers: EVIL });
    await any.registered();
  });

  it.each(SDK_KINDS)('requests without an Origin are unaffected: a %s worker registers and is called', async (kind: SdkKind) => {
    const engine = await startTestEngine();
    const w = await startWorker(kind, engine, (x) => x.registerFunction('plain::fn', () => 'ok'));
    expect(await w.trigger({ function_id: 'plain::fn', payload: {} })).toBe('ok');
  });
});

describe('bridge token', () => {
  it('refuses / and /otel without the token or with a wrong one: 401 unauthorized, token never echoed, logged', async () => {
    const capture = captureLog('warn');
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } }, { logger: capture.logger });
    for (const path of ['/', '/otel']) {
      for (const headers of [undefined, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }]) {
        const refusal = await upgradeRefusal(engine.bridgeUrl + path, headers);
        expect(refusal.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(refusal.headers['www-authenticate']).toBe('Bearer');
        expect(JSON.parse(refusal.body)).toEqual({
          code: 'unauthorized',
          error: 'The bridge requires a token: send Authorization: Bearer <token> or ?token=<token>',
        });
      }
      expect(await upgradeStatus(`${engine.bridgeUrl}${path}?token=wrong`)).toBe(401);
    }
    expect(engine.stats().workers).toBe(0);
    const refused = capture.records.filter((r) => r.level === LEVEL.warn && /refused a bridge connection/.test(r.msg));
    expect(refused).toEqual([expect.objectContaining({ path: '/', msg: 'refused a bridge connection with no token (bridge.auth_token is set)' })]);
    expect(JSON.stringify(capture.records)).not.toContain(TOKEN);
  });

  it('logs a wrong token as such, never the token itself', async () => {
    const capture = captureLog('warn');
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } }, { logger: capture.logger });
    expect(await upgradeStatus(`${engine.bridgeUrl}/otel?token=${TOKEN}x`)).toBe(401);
    expect(capture.records.filter((r) => r.level === LEVEL.warn).map((r) => [r.path, r.msg])).toEqual([
      ['/otel', 'refused a bridge connection with a wrong token (bridge.auth_token is set)'],
    ]);
    expect(JSON.stringify(capture.records)).not.toContain(TOKEN);
  });

  it('accepts the token as Authorization: Bearer or as ?token=, on / and /otel', async () => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const byHeader = await RawClient.connect(engine.bridgeUrl, '/', { headers: { authorization: `Bearer ${TOKEN}` } });
    await byHeader.registered();
    const byQuery = await RawClient.connect(engine.bridgeUrl, `/?token=${TOKEN}`);
    await byQuery.registered();
    const otel = await RawClient.connect(engine.bridgeUrl, `/otel?token=${TOKEN}`);
    otel.sendBinary(Buffer.from('OTLP{"resourceSpans":[]}'));
    await waitFor(() => engine.stats().telemetryDroppedFrames === 1, 2000, 'the telemetry frame (counted: no module consumes telemetry)');
  });

  it('channel sockets need no token: their access key proves the right to them', async () => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const path = await channelReaderPath(engine, { authorization: `Bearer ${TOKEN}` });
    const reader = await RawClient.connect(engine.bridgeUrl, path);
    expect(reader.open).toBe(true);
  });

  it('takes FLINT_BRIDGE_TOKEN when the config sets no token; bridge.auth_token wins over it', async () => {
    const fromEnv = await startTestEngine({}, { env: { FLINT_BRIDGE_TOKEN: 'from-env' } });
    expect(fromEnv.bridgeToken).toBe('from-env');
    expect(await upgradeStatus(fromEnv.bridgeUrl)).toBe(401);
    await (await RawClient.connect(fromEnv.bridgeUrl, '/?token=from-env')).registered();

    const both = await startTestEngine({ bridge: { auth_token: 'from-config' } }, { env: { FLINT_BRIDGE_TOKEN: 'from-env' } });
    expect(both.bridgeToken).toBe('from-config');
    expect(await upgradeStatus(`${both.bridgeUrl}/?token=from-env`)).toBe(401);
    await (await RawClient.connect(both.bridgeUrl, '/?token=from-config')).registered();

    const none = await startTestEngine({}, { env: { FLINT_BRIDGE_TOKEN: '' } });
    expect(none.bridgeToken).toBeUndefined();
    await (await RawClient.connect(none.bridgeUrl)).registered();
  });

  it('@flint/sdk sends its token option; its channels work too', async () => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const w = await startWorker('flint', engine, (x) => x.registerFunction('tok::fn', () => 'ok'), { token: TOKEN });
    expect(await w.trigger({ function_id: 'tok::fn', payload: {} })).toBe('ok');
    const { writer, reader } = await w.createChannel();
    const received = reader.readAll() as Promise<Buffer>;
    writer.stream.end(Buffer.from('through the channel'));
    expect((await within(received, 3000, 'the channel data')).toString()).toBe('through the channel');
  });

  it.each(SDK_KINDS)('a %s worker with ?token= in its URL registers, is called, and streams through a channel', async (kind: SdkKind) => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const w = connectWorker(kind, `${engine.bridgeUrl}/?token=${TOKEN}`);
    w.registerFunction('tok::fn', () => 'ok');
    await whenAnnounced(engine, w);
    expect(await w.trigger({ function_id: 'tok::fn', payload: {} })).toBe('ok');
    const { writer, reader } = await w.createChannel();
    const received = reader.readAll() as Promise<Buffer>;
    writer.stream.end(Buffer.from('through the channel'));
    expect((await within(received, 3000, 'the channel data')).toString()).toBe('through the channel');
  });

  it('a worker without the token is not let in', async () => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const w = connectWorker('iii', engine.bridgeUrl);
    w.registerFunction('sneaky::fn', () => 'forged');
    const flint = connectWorker('flint', engine.bridgeUrl);
    flint.registerFunction('sneaky::fn2', () => 'forged');
    await waitFor(() => (flint.native as FlintWorker).connectionProblem?.kind === 'unauthorized', 2000, 'the refusal');
    const caller = await startWorker('flint', engine, undefined, { token: TOKEN });
    await caller.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} });
    expect(engine.stats().workers).toBe(1);
    expect(engine.listFunctions().map((f) => f.function_id)).toEqual([]);
  });
});

describe('refused upgrades', () => {
  /** Sends a WebSocket upgrade over raw TCP, reads the start of the answer, then resets the connection (RST). */
  function upgradeThenReset(port: number, path: string, headers = ''): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${headers}\r\n`,
        );
      });
      socket.once('error', reject);
      socket.once('data', (chunk) => {
        socket.resetAndDestroy();
        resolve(chunk.toString().split('\r\n')[0] as string);
      });
    });
  }

  it('a client resetting the connection after a refusal does not take the engine down', async () => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const port = Number(new URL(engine.bridgeUrl).port);
    const answers: string[] = [];
    answers.push(await upgradeThenReset(port, '/', 'Origin: https://evil.example\r\n'));
    answers.push(await upgradeThenReset(port, '/'));
    answers.push(await upgradeThenReset(port, '/nowhere'));
    answers.push(await upgradeThenReset(port, '/ws/channels/x?key=k&dir=sideways'));
    expect(answers).toEqual(['HTTP/1.1 403 Forbidden', 'HTTP/1.1 401 Unauthorized', 'HTTP/1.1 401 Unauthorized', 'HTTP/1.1 400 Bad Request']);
    await sleep(100); // the resets reach the engine
    await (await RawClient.connect(engine.bridgeUrl, `/?token=${TOKEN}`)).registered();
  });
});

describe('start-up warning', () => {
  it('warns when the bridge listens beyond loopback without a token, not with one or on 127.0.0.1', async () => {
    const exposed = captureLog('warn');
    await startTestEngine({ bridge: { host: '0.0.0.0' } }, { logger: exposed.logger });
    const warning = exposed.records.find((r) => r.level === LEVEL.warn && r.host === '0.0.0.0');
    expect(warning?.msg).toMatch(/^the bridge listens on 0\.0\.0\.0, which other machines can reach, and has no token: .* Set bridge\.auth_token/);

    const withToken = captureLog('warn');
    await startTestEngine({ bridge: { host: '0.0.0.0', auth_token: TOKEN } }, { logger: withToken.logger });
    const loopback = captureLog('warn');
    await startTestEngine({}, { logger: loopback.logger });
    expect([...withToken.records, ...loopback.records].filter((r) => r.host !== undefined)).toEqual([]);
  });
});

// Last in the file: OTel in iii-sdk is process-global.
describe('iii-sdk telemetry with a bridge token', () => {
  it('reaches /otel with the ?token= of the worker URL', async () => {
    const engine = await startTestEngine({ bridge: { auth_token: TOKEN } });
    const w = connectWorker('iii', `${engine.bridgeUrl}/?token=${TOKEN}`, { otel: true });
    w.registerFunction('otel::fn', () => 'ok');
    await whenAnnounced(engine, w);
    new IiiLogger().info('hello from the token test', { n: 1 });
    await waitFor(() => engine.stats().telemetryDroppedFrames > 0, 3000, 'a telemetry frame (counted: no module consumes telemetry)');
  });
});
