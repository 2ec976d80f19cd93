/**
 * The console's access rules: the mutation header on every non-GET call, the token rules of
 * resolveOptions, and a console started with a token (bearer, login cookie, ?token= links, the live
 * WebSocket).
 */
import { ConsoleOptionsError, resolveOptions } from '@flint/console';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ConsoleEnv, startConsoleEnv, uid } from './support/console-env.js';
import { connectLive, refusedUpgrade } from './support/ws-client.js';

const TOKEN = 'tok-0123456789abcdef-secret';

describe('resolveOptions', () => {
  it('refuses a non-loopback host without a token', () => {
    expect(() => resolveOptions({ host: '0.0.0.0' }, {})).toThrow(ConsoleOptionsError);
    expect(() => resolveOptions({ host: '192.168.1.10' }, {})).toThrow(/without a token/);
    expect(() => resolveOptions({ host: '::' }, {})).toThrow(ConsoleOptionsError);
  });

  it('refuses a token shorter than 16 characters, from a flag or FLINT_CONSOLE_TOKEN', () => {
    expect(() => resolveOptions({ token: 'short' }, {})).toThrow(ConsoleOptionsError);
    expect(() => resolveOptions({}, { FLINT_CONSOLE_TOKEN: '123456789012345' })).toThrow(/at least 16/);
  });

  it('accepts loopback hosts without a token, and any host with a long enough token', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3']) expect(resolveOptions({ host }, {}).token).toBeUndefined();
    expect(resolveOptions({ host: '0.0.0.0', token: TOKEN }, {}).token).toBe(TOKEN);
    expect(resolveOptions({ host: '0.0.0.0' }, { FLINT_CONSOLE_TOKEN: TOKEN }).token).toBe(TOKEN);
  });
});

describe('the mutation header (no token)', () => {
  let env: ConsoleEnv;
  const fn = `${uid('sec')}::ping`;
  let calls = 0;

  beforeAll(async () => {
    env = await startConsoleEnv();
    await env.worker((w) =>
      w.registerFunction(fn, () => {
        calls++;
        return 'pong';
      }),
    );
  });
  afterAll(() => env?.close());

  it('refuses POST, PUT and DELETE without x-flint-console: 1 with 403 same_origin_header_required, before doing anything', async () => {
    const post = await env.api('POST', '/_console/invoke', { function_id: fn }, { mutationHeader: false });
    expect(post.status).toBe(403);
    expect(post.body.code).toBe('same_origin_header_required');
    const wrong = await env.api('POST', '/_console/invoke', { function_id: fn }, { mutationHeader: false, headers: { 'x-flint-console': 'yes' } });
    expect(wrong.status).toBe(403);
    const put = await env.api('PUT', '/_console/states/s/k', { value: 1 }, { mutationHeader: false });
    expect(put.status).toBe(403);
    const del = await env.api('DELETE', '/_console/states/s/k', undefined, { mutationHeader: false });
    expect(del.status).toBe(403);
    expect(calls).toBe(0);
    const states = await env.api('GET', '/_console/states/s');
    expect(states.body.total).toBe(0);
  });

  it('lets GET through without it, and the same POST with it', async () => {
    const get = await env.api('GET', '/_console/functions');
    expect(get.status).toBe(200);
    const post = await env.api('POST', '/_console/invoke', { function_id: fn });
    expect(post.body).toMatchObject({ status: 'ok', result: 'pong' });
    expect(calls).toBe(1);
  });

  it('says token_required false and lets everything in without a token', async () => {
    const config = await env.api('GET', '/_console/config');
    expect(config.body.console.token_required).toBe(false);
    const login = await env.api('POST', '/_console/login', { token: 'anything' });
    expect(login.status).toBe(204);
  });
});

describe('a console with a token', () => {
  let env: ConsoleEnv;

  beforeAll(async () => {
    env = await startConsoleEnv({ token: TOKEN });
  });
  afterAll(() => env?.close());

  it('answers API calls without the token with 401 token_required and a WWW-Authenticate challenge', async () => {
    for (const path of ['/_console/status', '/_console/functions', '/_console/states']) {
      const res = await env.api('GET', path, undefined, { auth: false });
      expect(res.status, path).toBe(401);
      expect(res.body.code).toBe('token_required');
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="flint-console"');
    }
    const post = await env.api('POST', '/_console/invoke', { function_id: 'x' }, { auth: false });
    expect(post.status).toBe(401);
    const wrong = await env.api('GET', '/_console/functions', undefined, { auth: false, headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    for (const cookie of ['flint_console_token=nope', 'flint_console_token=%ZZ', 'other=1; flint_console_token=']) {
      const badCookie = await env.api('GET', '/_console/functions', undefined, { auth: false, headers: { cookie } });
      expect(badCookie.status, cookie).toBe(401);
      expect(badCookie.body.code).toBe('token_required');
    }
  });

  it('answers with Authorization: Bearer <token>', async () => {
    const res = await env.api('GET', '/_console/status');
    expect(res.status).toBe(200);
    expect(res.body.bridge).toBe('connected');
  });

  it('keeps /_console/config readable without the token, saying token_required true', async () => {
    const res = await env.api('GET', '/_console/config', undefined, { auth: false });
    expect(res.status).toBe(200);
    expect(res.body.console.token_required).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  });

  it('POST /_console/login with the right token sets an HttpOnly SameSite=Strict cookie that then works', async () => {
    const login = await env.api('POST', '/_console/login', { token: TOKEN }, { auth: false });
    expect(login.status).toBe(204);
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^flint_console_token=[^;]+; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/');
    const pair = cookie.split(';')[0] as string;
    const res = await env.api('GET', '/_console/functions', undefined, { auth: false, headers: { cookie: pair } });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.functions)).toBe(true);
  });

  it('POST /_console/login with a wrong or missing token answers 401 token_invalid without a cookie', async () => {
    for (const body of [{ token: 'not-the-token-at-all' }, {}, { token: 42 }]) {
      const res = await env.api('POST', '/_console/login', body, { auth: false });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('token_invalid');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('POST /_console/login needs the mutation header too', async () => {
    const res = await env.api('POST', '/_console/login', { token: TOKEN }, { auth: false, mutationHeader: false });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('same_origin_header_required');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('GET /?token=<token> logs the browser in: 303 with the cookie, to the same page without the token', async () => {
    const res = await fetch(`${env.url}/functions?token=${TOKEN}&tab=all`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/functions?tab=all');
    expect(res.headers.get('location')).not.toContain(TOKEN);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const api = await env.api('GET', '/_console/workers', undefined, { auth: false, headers: { cookie: cookie.split(';')[0] as string } });
    expect(api.status).toBe(200);

    const root = await fetch(`${env.url}/?token=${TOKEN}`, { redirect: 'manual' });
    expect(root.status).toBe(303);
    expect(root.headers.get('location')).toBe('/');
  });

  it('GET /?token=<wrong> answers 401 token_invalid', async () => {
    const res = await fetch(`${env.url}/?token=wrong-token-wrong-token`, { redirect: 'manual' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('token_invalid');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses the live WebSocket without the token (401), and accepts it with the bearer token or the cookie', async () => {
    const liveUrl = `${env.url.replace('http:', 'ws:')}/_console/live`;
    const refused = await refusedUpgrade(liveUrl);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'token_required' });
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="flint-console"');

    const withBearer = await connectLive(liveUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await withBearer.next()).toEqual({ type: 'bridge', state: 'connected' });
    withBearer.close();
    const withCookie = await connectLive(liveUrl, { headers: { cookie: `flint_console_token=${encodeURIComponent(TOKEN)}` } });
    expect(await withCookie.next()).toEqual({ type: 'bridge', state: 'connected' });
    withCookie.close();
  });

  it('refuses the stream proxy without the token (401)', async () => {
    const refused = await refusedUpgrade(`${env.url.replace('http:', 'ws:')}/_console/streams`);
    expect(refused.status).toBe(401);
    const ws = new WebSocket(`${env.url.replace('http:', 'ws:')}/_console/streams`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.close();
  });
});
