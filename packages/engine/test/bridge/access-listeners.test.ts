/**
 * Several worker listeners (`bridge` written as a list): each serves workers and calls cross them; each
 * has its own token and may serve `wss://` (`tls`); config problems name the listener as written
 * (`bridge.port` for one listener, `bridge[1].port` in a list). A listener's auth function
 * (`access.auth_function_id`, served by a trusted worker on the open listener) decides about every worker
 * connection: what it is given, its refusals (401/403, 503 when it fails), and that a refused worker
 * leaves nothing behind. (What the auth function's answer allows is access-policy.test.ts.)
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ConfigError, createEngine, startEngine } from '@flint/engine';
import { EngineFunctions } from '@flint/protocol';
import type { Worker as FlintWorker } from '@flint/sdk';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { flintOf, listenerUrl, makeCertificate, startGatekeeper, startListeners, startWorkerOn } from '../support/access.js';
import { cleanup, track } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, connectWorker, listWorkers, startWorker, waitForFunction } from '../support/harness.js';
import { RawClient, upgradeRefusal, upgradeStatus } from '../support/raw-client.js';
import { tempRoot } from '../support/temp-root.js';
import { freePort, sleep, waitFor } from '../support/util.js';

afterEach(cleanup);

const TOKEN = 'listener-two-secret';

/** The ConfigError `createEngine` throws for this `bridge` value. */
function bridgeConfigError(bridge: unknown): ConfigError {
  try {
    const engine = createEngine({ env: {}, config: { bridge, log: { level: 'silent' } } });
    track(() => engine.stop());
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected createEngine to throw a ConfigError');
}

/** Whether a plain TCP server can bind `port` on 127.0.0.1 now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('several listeners', () => {
  it('engine.listeners() names them bridge, bridge[1], bridge[2] with distinct ws:// URLs; bridgeUrl is the first', async () => {
    const engine = await startListeners([{}, {}, {}]);
    const bridges = engine.listeners().filter((l) => l.name.startsWith('bridge'));
    expect(bridges.map((l) => l.name)).toEqual(['bridge', 'bridge[1]', 'bridge[2]']);
    for (const l of bridges) expect(l.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(new Set(bridges.map((l) => l.url)).size).toBe(3);
    expect(engine.bridgeUrl).toBe(bridges[0]?.url);
    for (const l of bridges) await (await RawClient.connect(l.url)).registered();
    expect(engine.stats().workers).toBe(3);
  });

  it.each(SDK_KINDS)('%s workers on different listeners are served and call each other', async (kind: SdkKind) => {
    const engine = await startListeners([{}, {}]);
    const a = await startWorker(kind, engine, (w) => w.registerFunction('side::a', (x: { n: number }) => ({ from: 'a', n: x.n })));
    const b = await startWorkerOn(kind, engine, listenerUrl(engine, 'bridge[1]'), (w) =>
      w.registerFunction('side::b', (x: { n: number }) => ({ from: 'b', n: x.n })),
    );
    expect(await a.trigger({ function_id: 'side::b', payload: { n: 1 } })).toEqual({ from: 'b', n: 1 });
    expect(await b.trigger({ function_id: 'side::a', payload: { n: 2 } })).toEqual({ from: 'a', n: 2 });
    expect((await listWorkers(engine)).map((w) => w.name).sort()).toEqual([a.name, b.name].sort());
  });

  it('a config problem names the listener as written: bridge[1].… in a list, bridge.… for one listener', () => {
    expect(bridgeConfigError([{ port: 0 }, { port: -1 }]).message).toBe('bridge[1].port: -1 is not a valid port (0-65535)');
    expect(bridgeConfigError({ port: -1 }).message).toBe('bridge.port: -1 is not a valid port (0-65535)');
    expect(bridgeConfigError([{ port: 0 }, { port: 0, access: { expose_functions: ['public::*'] } }]).message).toBe(
      'bridge[1].access.expose_functions[0]: expected match(<glob>), e.g. match(orders::*)',
    );
    expect(bridgeConfigError({ access: { bogus: 1 } }).message).toBe('bridge.access.bogus: unknown key');
    expect(bridgeConfigError([{ port: 0 }, { port: 0, tls: { cert_file: 'c.pem' } }]).message).toMatch(/^bridge\[1\]\.tls\.key_file: /);
    expect(bridgeConfigError([]).message).toBe('bridge: needs at least one listener');
  });

  it('a second listener whose port is taken fails start-up naming bridge[1].port, and the first listener lets its port go', async () => {
    const port = await freePort();
    const second = await freePort();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(second, '127.0.0.1', resolve));
    track(() => new Promise((resolve) => blocker.close(resolve)));
    const engine = createEngine({ env: {}, config: { bridge: [{ port }, { port: second }], log: { level: 'silent' } } });
    track(() => engine.stop());
    await expect(engine.start()).rejects.toThrow(
      `cannot listen on 127.0.0.1:${second}: address already in use (EADDRINUSE); the port is set by bridge[1].port`,
    );
    await waitFor(() => canBind(port), 2000, `port ${port} of the first listener to be free again`);
  });
});

describe('a token per listener', () => {
  it('only the listener with auth_token asks for it (401 unauthorized); Bearer header and ?token= both work there', async () => {
    const engine = await startListeners([{}, { auth_token: TOKEN }]);
    const open = listenerUrl(engine, 'bridge');
    const guarded = listenerUrl(engine, 'bridge[1]');
    const refusal = await upgradeRefusal(guarded);
    expect(refusal.status).toBe(401);
    expect(JSON.parse(refusal.body)).toMatchObject({ code: 'unauthorized' });
    expect(await upgradeStatus(`${guarded}/?token=wrong`)).toBe(401);
    await (await RawClient.connect(open)).registered();
    await (await RawClient.connect(guarded, '/', { headers: { authorization: `Bearer ${TOKEN}` } })).registered();
    await (await RawClient.connect(guarded, `/?token=${TOKEN}`)).registered();
    // The token of listener 2 is not asked for on listener 1, and is no key to it either: it is simply not looked at.
    await (await RawClient.connect(open, '/?token=anything')).registered();
    expect(engine.stats().workers).toBe(4);
  });

  it.each(SDK_KINDS)('a %s worker is let in on the token listener with the token as a Bearer header or as ?token=, never without', async (kind: SdkKind) => {
    const engine = await startListeners([{}, { auth_token: TOKEN }]);
    const guarded = listenerUrl(engine, 'bridge[1]');
    const without = connectWorker(kind, guarded);
    without.registerFunction('tok::without', () => 'no');
    const byHeader = await startWorkerOn(kind, engine, guarded, (w) => w.registerFunction('tok::header', () => 'header'), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const byQuery = await startWorkerOn(kind, engine, `${guarded}/?token=${TOKEN}`, (w) => w.registerFunction('tok::query', () => 'query'));
    const onOpen = await startWorker(kind, engine, (w) => w.registerFunction('tok::open', () => 'open'));
    if (kind === 'flint') {
      await waitFor(() => (without.native as FlintWorker).connectionProblem?.kind === 'unauthorized', 2000, 'the refusal');
    } else {
      await sleep(300); // iii-sdk retries every 50-200 ms: several refusals
    }
    expect(await onOpen.trigger({ function_id: 'tok::header', payload: {} })).toBe('header');
    expect(await byHeader.trigger({ function_id: 'tok::query', payload: {} })).toBe('query');
    expect(await byQuery.trigger({ function_id: 'tok::open', payload: {} })).toBe('open');
    expect((await listWorkers(engine)).map((w) => w.name).sort()).toEqual([byHeader.name, byQuery.name, onOpen.name].sort());
    expect(engine.listFunctions().map((f) => f.function_id)).not.toContain('tok::without');
  });

  it('FLINT_BRIDGE_TOKEN guards the listeners without a token of their own; a listener token wins over it', async () => {
    const engine = await startListeners([{}, { auth_token: TOKEN }], {}, { env: { FLINT_BRIDGE_TOKEN: 'from-env' } });
    const open = listenerUrl(engine, 'bridge');
    const guarded = listenerUrl(engine, 'bridge[1]');
    expect(await upgradeStatus(open)).toBe(401);
    await (await RawClient.connect(open, '/?token=from-env')).registered();
    expect(await upgradeStatus(`${guarded}/?token=from-env`)).toBe(401);
    await (await RawClient.connect(guarded, `/?token=${TOKEN}`)).registered();
  });
});

describe('TLS', () => {
  const root = tempRoot('flint-access-tls-');
  let tls: ReturnType<typeof makeCertificate>;
  beforeAll(() => {
    tls = makeCertificate(root.path);
  });
  const tlsListener = () => ({ tls: { cert_file: tls.certFile, key_file: tls.keyFile } });

  it('a listener with tls serves wss://: a client trusting the certificate registers, serves and calls across listeners', async () => {
    const engine = await startListeners([{}, tlsListener()]);
    expect(listenerUrl(engine, 'bridge')).toMatch(/^ws:\/\//);
    const secure = listenerUrl(engine, 'bridge[1]');
    expect(secure).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
    const plain = await startWorker('flint', engine, (w) => w.registerFunction('plain::echo', (x: unknown) => ({ plain: x })));
    const client = await RawClient.connect(secure, '/', { ca: tls.cert });
    expect(await client.registered()).toMatch(/^[0-9a-f-]{36}$/);
    expect((await client.invoke('plain::echo', { n: 1 })).result).toEqual({ plain: { n: 1 } });
    await client.serve('secure::echo', (x) => ({ secure: x }));
    expect(await plain.trigger({ function_id: 'secure::echo', payload: { n: 2 } })).toEqual({ secure: { n: 2 } });
  });

  it('plain ws:// to the TLS port does not connect, nor does wss:// without trusting the certificate', async () => {
    const engine = await startListeners([{}, tlsListener()]);
    const secure = listenerUrl(engine, 'bridge[1]');
    const attempt = (url: string, ca?: Buffer) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(url, { ca });
        ws.once('open', () => {
          ws.terminate();
          resolve('open');
        });
        ws.once('error', (err: Error & { code?: string }) => resolve(err.code ?? err.message));
      });
    expect(await attempt(secure.replace(/^wss:/, 'ws:'))).not.toBe('open');
    expect(await attempt(secure)).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(await attempt(secure, tls.cert)).toBe('open');
    expect(await attempt(listenerUrl(engine, 'bridge').replace(/^ws:/, 'wss:'), tls.cert)).not.toBe('open');
  });

  it('relative cert_file and key_file resolve against the folder of the config file', async () => {
    const file = join(root.path, 'flint-tls.yaml');
    writeFileSync(file, 'log: { level: silent }\nbridge:\n  - { port: 0 }\n  - { port: 0, tls: { cert_file: cert.pem, key_file: key.pem } }\n');
    const engine = await startEngine({ env: {}, configPath: file, cwd: '/' });
    track(() => engine.stop());
    await (await RawClient.connect(listenerUrl(engine, 'bridge[1]'), '/', { ca: tls.cert })).registered();
  });

  it('a certificate or key that cannot be read fails createEngine with a ConfigError naming the listener and the key', () => {
    const missing = join(root.path, 'missing.pem');
    const listed = bridgeConfigError([{ port: 0 }, { port: 0, tls: { cert_file: missing, key_file: tls.keyFile } }]);
    expect(listed.message).toBe(`bridge[1].tls.cert_file: cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'`);
    expect(listed.problems.map((p) => p.path)).toEqual(['bridge[1].tls.cert_file']);
    const single = bridgeConfigError({ port: 0, tls: { cert_file: tls.certFile, key_file: missing } });
    expect(single.problems.map((p) => p.path)).toEqual(['bridge.tls.key_file']);
  });

  // Once node:crypto's own error came out of createEngine, naming neither the listener nor the files.
  it('a cert_file that is not PEM fails createEngine with a ConfigError naming bridge[1].tls and the files', () => {
    const notPem = join(root.path, 'not-a-cert.pem');
    writeFileSync(notPem, 'this is not a certificate\n');
    const error = bridgeConfigError([{ port: 0 }, { port: 0, tls: { cert_file: notPem, key_file: tls.keyFile } }]);
    expect(error.message).toMatch(/^bridge\[1\]\.tls: /);
    expect(error.message).toContain(notPem);
    expect(error.message).toMatch(/PEM|certificate/);
  });

  // Once the connection over the cap was served on a TLS listener (the cap watched the TCP socket, the
  // request came on the TLS one) and cut two seconds later.
  it('on a TLS listener a connection over max_connections is answered 503, as on a plain listener', async () => {
    const engine = await startListeners([{ max_connections: 1 }, { max_connections: 1, ...tlsListener() }]);
    await (await RawClient.connect(listenerUrl(engine, 'bridge'))).registered();
    expect(await upgradeStatus(listenerUrl(engine, 'bridge'))).toBe(503);
    await (await RawClient.connect(listenerUrl(engine, 'bridge[1]'), '/', { ca: tls.cert })).registered();
    const over = await Promise.race([
      upgradeRefusal(listenerUrl(engine, 'bridge[1]'), undefined, tls.cert).then((r) => r.status),
      sleep(3000).then(() => 'no answer'),
    ]).catch((err: Error) => err.message);
    expect(over).toBe(503);
  });
});

describe('auth function', () => {
  it('gets the headers, query_params, ip_address, addr and path of the upgrade, on / and on /otel', async () => {
    const g = await startGatekeeper();
    const client = await RawClient.connect(g.url, '/?tag=a&tag=b&team=blue', { headers: { 'x-team': 'blue', authorization: 'Bearer abc' } });
    await client.registered();
    expect(g.seen.auth).toHaveLength(1);
    const input = g.seen.auth[0];
    expect(Object.keys(input).sort()).toEqual(['addr', 'headers', 'ip_address', 'path', 'query_params']);
    expect(input.headers).toMatchObject({ 'x-team': 'blue', authorization: 'Bearer abc', upgrade: 'websocket' });
    expect(input.query_params).toEqual({ tag: ['a', 'b'], team: ['blue'] });
    expect(input.ip_address).toBe('127.0.0.1');
    expect(input.addr).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(input.addr).not.toBe(`127.0.0.1:${new URL(g.url).port}`); // the client's port, not the listener's
    expect(input.path).toBe('/');
    await RawClient.connect(g.url, '/otel');
    expect(g.seen.auth[1]?.path).toBe('/otel');
    // The open listener has no auth function.
    await (await RawClient.connect(g.openUrl)).registered();
    expect(g.seen.auth).toHaveLength(2);
  });

  it('{allow: false, reason} refuses with 401 connection_unauthorized and the reason; with status 403, 403 connection_forbidden', async () => {
    const g = await startGatekeeper();
    g.answer.auth = (input) =>
      input.query_params.who?.[0] === 'stranger' ? { allow: false, reason: 'who are you?' } : { allow: false, status: 403, reason: 'not you' };
    const unauthorized = await upgradeRefusal(`${g.url}/?who=stranger`);
    expect(unauthorized.status).toBe(401);
    expect(JSON.parse(unauthorized.body)).toEqual({ code: 'connection_unauthorized', error: 'who are you?' });
    const forbidden = await upgradeRefusal(`${g.url}/?who=mallory`);
    expect(forbidden.status).toBe(403);
    expect(JSON.parse(forbidden.body)).toEqual({ code: 'connection_forbidden', error: 'not you' });
    expect((await upgradeRefusal(`${g.url}/otel`)).status).toBe(403);
    g.answer.auth = () => ({ allow: false });
    expect(JSON.parse((await upgradeRefusal(g.url)).body)).toEqual({
      code: 'connection_unauthorized',
      error: 'the connection was refused by the auth function',
    });
    expect(engineWorkerCount(g.engine)).toBe(1); // the trusted worker
  });

  it('an auth function that throws, is not registered or answers after auth_timeout_ms refuses with 503 auth_unavailable', async () => {
    const g = await startGatekeeper({ access: { auth_timeout_ms: 150 } });
    g.answer.auth = () => {
      throw new Error('directory down');
    };
    const thrown = await upgradeRefusal(g.url);
    expect(thrown.status).toBe(503);
    expect(JSON.parse(thrown.body)).toMatchObject({
      code: 'auth_unavailable',
      error: expect.stringMatching(/^auth function acl::auth failed: .*directory down/),
    });
    g.answer.auth = () => sleep(600).then(() => ({}));
    const started = Date.now();
    const slow = await upgradeRefusal(g.url);
    expect(slow.status).toBe(503);
    expect(JSON.parse(slow.body).error).toMatch(/^auth function acl::auth failed: invocation_timeout/);
    expect(Date.now() - started).toBeLessThan(550);
    await g.trusted.shutdown();
    await waitForFunction(g.engine, 'acl::auth', false);
    const missing = await upgradeRefusal(g.url);
    expect(missing.status).toBe(503);
    expect(JSON.parse(missing.body).error).toMatch(/^auth function acl::auth failed: function_not_found/);
    expect(engineWorkerCount(g.engine)).toBe(0);
  });

  it('the listener token is checked first: an upgrade without it never reaches the auth function', async () => {
    const g = await startGatekeeper({ listener: { auth_token: TOKEN } });
    expect(await upgradeStatus(g.url)).toBe(401);
    expect(g.seen.auth).toEqual([]);
    await (await RawClient.connect(g.url, `/?token=${TOKEN}`)).registered();
    expect(g.seen.auth).toHaveLength(1);
  });

  it.each(SDK_KINDS)('a refused %s worker registers nothing and is never listed', async (kind: SdkKind) => {
    const g = await startGatekeeper();
    g.answer.auth = (input) => (input.headers['x-key'] === 'good' ? {} : { allow: false, reason: 'bad key' });
    const refused = connectWorker(kind, g.url, { headers: { 'x-key': 'bad' } });
    refused.registerFunction('sneaky::fn', () => 'forged');
    refused.registerTrigger({ type: 'sneaky-type', function_id: 'sneaky::fn', config: {} });
    // iii-sdk keeps retrying; @flint/sdk reports the problem (and retries too).
    await waitFor(() => g.seen.auth.length >= 2, 3000, 'two refused attempts');
    if (kind === 'flint') expect(flintOf(refused).connectionProblem?.kind).toBe('unauthorized');
    const admitted = await startWorkerOn(kind, g.engine, g.url, (w) => w.registerFunction('honest::fn', () => 'ok'), { headers: { 'x-key': 'good' } });
    expect(await g.trusted.trigger({ function_id: 'honest::fn', payload: {} })).toBe('ok');
    expect((await listWorkers(g.engine)).map((w) => w.name).sort()).toEqual([admitted.name, g.trusted.name].sort());
    const ids = g.engine.listFunctions(true).map((f) => f.function_id);
    expect(ids).toContain('honest::fn');
    expect(ids).not.toContain('sneaky::fn');
    const triggers = (await g.engine.invoke(EngineFunctions.LIST_TRIGGERS, { include_internal: true })) as { triggers: { function_id: string }[] };
    expect(triggers.triggers.filter((t) => t.function_id === 'sneaky::fn')).toEqual([]);
    expect(engineWorkerCount(g.engine)).toBe(2);
  });
});

const engineWorkerCount = (engine: { stats(): { workers: number } }) => engine.stats().workers;
