/**
 * How a route's failure is answered: a handler whose own call fails (a function nobody provides,
 * `state::get` without flint-state, a nested time-out) is the handler's failure, 500 handler_error with
 * a logged error_id and the nested cause, never 503 (which means the route's own function has no
 * provider); a handler's own error code reaches the response.
 */
import { FlintError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, startWorker } from '../support/harness.js';
import { fetchWithin, json, serveRoute, startHttpEngine } from '../support/http/helpers.js';
import { LEVEL } from '../support/log-capture.js';
import { waitFor } from '../support/util.js';

afterEach(cleanup);

describe.each(SDK_KINDS)('a failing nested call in a %s route handler', (kind: SdkKind) => {
  it('answers 500 handler_error with a logged error_id and the nested cause, not 503', async () => {
    const { engine, base, logs } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'orders::missing', { method: 'GET', path: '/orders/missing' }, async () => w.trigger({ function_id: 'nobody::here', payload: {} }));
      // The engine has no flint-state module here: state::get is not registered.
      serveRoute(w, 'orders::state', { method: 'GET', path: '/orders/state' }, async () =>
        w.trigger({ function_id: 'state::get', payload: { scope: 'orders', key: 'a' } }),
      );
      w.registerFunction('slow::inner', () => new Promise((resolve) => setTimeout(() => resolve(1), 1000)));
      serveRoute(w, 'orders::slow', { method: 'GET', path: '/orders/slow' }, async () =>
        w.trigger({ function_id: 'slow::inner', payload: {}, timeoutMs: 100 }),
      );
    });
    const cases = [
      ['/orders/missing', 'function_not_found', 'nobody::here'],
      ['/orders/state', 'function_not_found', 'state::get'],
      ['/orders/slow', 'invocation_timeout', 'slow::inner'],
    ] as const;
    for (const [path, nestedCode, nestedId] of cases) {
      const res = await fetchWithin(`${base}${path}`);
      expect(res.status, path).toBe(500);
      const body = await json(res);
      expect(body, path).toMatchObject({ code: 'handler_error', error_id: expect.stringMatching(/^[0-9a-f]+$/) });
      // @flint/sdk reports the nested failure as the cause; iii-sdk sends every failure as a message
      // (its own call time-out says "TIMEOUT: invocation timed out").
      if (kind === 'flint') {
        expect(body.error, path).toContain(nestedId);
        expect(body.cause, path).toMatchObject({ code: nestedCode, message: expect.stringContaining(nestedId) });
      } else expect(body.error, path).toMatch(/not found|timed out/);
      const logged = await waitFor(() => logs.find((l) => l.error_id === body.error_id), 1000, `${path}: the error_id in the log`);
      expect(logged.level).toBe(LEVEL.error);
    }
  });
});

describe('a handler failing with its own code (@flint/sdk)', () => {
  it('answers with the handler code (500, error_id logged); invalid_payload is a 400; other codes stay handler_error', async () => {
    const { engine, base, logs } = await startHttpEngine();
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'shop::buy', { method: 'POST', path: '/buy' }, () => {
        throw new FlintError('out_of_stock', 'No stock for sku-1');
      });
      // Another copy of the SDK's FlintError class (or any Error with a snake_case code) counts too.
      serveRoute(w, 'shop::copy', { method: 'POST', path: '/copy' }, () => {
        throw Object.assign(new Error('Coupon expired'), { code: 'coupon_expired' });
      });
      serveRoute(w, 'shop::check', { method: 'POST', path: '/check' }, () => {
        throw new FlintError('invalid_payload', 'quantity must be positive');
      });
      serveRoute(w, 'shop::fs', { method: 'POST', path: '/fs' }, () => {
        throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
      });
    });
    const buy = await fetchWithin(`${base}/buy`, { method: 'POST' });
    expect(buy.status).toBe(500);
    const bought = await json(buy);
    expect(bought).toMatchObject({ code: 'out_of_stock', error: 'No stock for sku-1', error_id: expect.any(String) });
    await waitFor(() => logs.find((l) => l.error_id === bought.error_id), 1000, 'the error_id in the log');

    expect(await json(await fetchWithin(`${base}/copy`, { method: 'POST' }))).toMatchObject({ code: 'coupon_expired', error: 'Coupon expired' });
    const check = await fetchWithin(`${base}/check`, { method: 'POST' });
    expect([check.status, await json(check)]).toEqual([400, { code: 'invalid_payload', error: 'quantity must be positive' }]);
    const fs = await fetchWithin(`${base}/fs`, { method: 'POST' });
    expect(fs.status).toBe(500);
    expect(await json(fs)).toMatchObject({ code: 'handler_error', error: 'ENOENT: no such file' });
  });
});
