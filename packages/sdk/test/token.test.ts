/**
 * The bridge token on the SDK side: the `token` option (else FLINT_TOKEN, else a `?token=` already in
 * the URL) lets a worker into an engine with `bridge.auth_token`; a refusal says what is wrong without
 * showing the token; and frames the engine refuses (`error` frames) reach the user as `engineError`.
 */
import { FlintInvocationError, type WorkerOptions } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, rejection, startTestEngine, startWorker, waitFor, within } from './support.js';

afterEach(cleanup);

const TOKEN = 'sdk-test-token-42';

/** A worker whose SDK log lines (every level) are collected. */
function loggedWorker(url: string, options: WorkerOptions = {}) {
  const lines: string[] = [];
  const push = (...args: unknown[]) => lines.push(args.map(String).join(' '));
  const worker = startWorker(url, { reconnect: { initialDelayMs: 20, maxDelayMs: 40 }, log: { warn: push, error: push, debug: push }, ...options });
  return { worker, lines };
}

describe('the bridge token', () => {
  it('is sent from the token option, else from FLINT_TOKEN, else from a ?token= in the URL', async () => {
    const engine = await startTestEngine({ bridge: { port: 0, auth_token: TOKEN } });
    const provider = startWorker(engine.bridgeUrl, { token: TOKEN });
    provider.registerFunction('tok::fn', () => 'ok');
    await within(provider.waitConnected(), 3000, 'the token option');

    const saved = process.env.FLINT_TOKEN;
    process.env.FLINT_TOKEN = TOKEN;
    let fromEnv: ReturnType<typeof startWorker>;
    try {
      fromEnv = startWorker(engine.bridgeUrl);
    } finally {
      if (saved === undefined) delete process.env.FLINT_TOKEN;
      else process.env.FLINT_TOKEN = saved;
    }
    expect(await within(fromEnv.trigger({ function_id: 'tok::fn', payload: {} }), 3000, 'FLINT_TOKEN')).toBe('ok');

    const fromUrl = startWorker(`${engine.bridgeUrl}/?token=${TOKEN}`);
    expect(await within(fromUrl.trigger({ function_id: 'tok::fn', payload: {} }), 3000, 'the URL token')).toBe('ok');
  });

  it('a missing token: the problem says the engine needs one, once; calls fail with not_connected', async () => {
    const engine = await startTestEngine({ bridge: { port: 0, auth_token: TOKEN } });
    const url = engine.bridgeUrl;
    const { worker, lines } = loggedWorker(url, { connectTimeoutMs: 300 });
    const err = await rejection(worker.trigger({ function_id: 'any::fn', payload: {} }));
    expect(err).toBeInstanceOf(FlintInvocationError);
    expect((err as FlintInvocationError).code).toBe('not_connected');
    expect((err as Error).message).toContain('HTTP 401: the engine needs a token — pass the token option or set FLINT_TOKEN');
    expect(worker.connectionProblem).toMatchObject({ kind: 'unauthorized', status: 401 });
    expect(lines).toEqual([
      `[flint] the engine at ${url} refused the connection (HTTP 401: the engine needs a token — pass the token option or set FLINT_TOKEN); retrying quietly`,
    ]);
  });

  it('a wrong token: the problem says so, and neither the token nor the URL token is shown', async () => {
    const engine = await startTestEngine({ bridge: { port: 0, auth_token: TOKEN } });
    const { worker, lines } = loggedWorker(`${engine.bridgeUrl}/?token=not-the-token`, { connectTimeoutMs: 300 });
    const err = (await rejection(worker.trigger({ function_id: 'any::fn', payload: {} }))) as Error;
    expect(err.message).toMatch(/^Not connected to ws:\/\/127\.0\.0\.1:\d+\/\?token=\*\*\*: /);
    expect(err.message).toContain("the engine refused the token — compare the token option (or FLINT_TOKEN) with the engine's bridge.auth_token");
    await waitFor(() => lines.length > 0, 2000, 'the log line');
    expect(lines.join('\n')).not.toContain('not-the-token');
    expect(lines.join('\n')).toContain('?token=***');
    const wrongOption = loggedWorker(engine.bridgeUrl, { token: 'also-wrong' });
    await waitFor(() => wrongOption.worker.connectionProblem, 2000, 'the refusal');
    expect(wrongOption.worker.connectionProblem?.detail).toContain('the engine refused the token');
  });
});

describe('frames the engine refuses', () => {
  it('are logged through the log option and emitted as engineError', async () => {
    const engine = await startTestEngine();
    const { worker, lines } = loggedWorker(engine.bridgeUrl);
    const errors: { code: string; message: string }[] = [];
    worker.on('engineError', (e) => errors.push({ code: e.code, message: e.message }));
    worker.registerFunction('engine::mine', () => 'forged');
    await waitFor(() => errors.length === 1, 3000, 'the engineError event');
    const message = 'Function id engine::mine is reserved: the prefix engine:: belongs to the engine and its modules';
    expect(errors).toEqual([{ code: 'function_id_reserved', message }]);
    expect(lines).toContain(`[flint] engine reported function_id_reserved: ${message}`);
  });
});
