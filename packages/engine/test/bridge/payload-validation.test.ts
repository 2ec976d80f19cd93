/**
 * Opt-in payload validation: with `validate_payloads: true` (or a function's `metadata.validate: true`)
 * a call whose payload does not fit the function's `request_format` is answered `invalid_payload` with
 * the JSON pointer and the reason, and the worker is never called.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, startTestEngine, startWorker } from '../support/harness.js';
import { fetchWithin, json, startHttpEngine } from '../support/http/helpers.js';
import { captureLog } from '../support/log-capture.js';
import { outcome, waitFor } from '../support/util.js';

afterEach(cleanup);

const ORDER_FORMAT = {
  type: 'object',
  required: ['sku', 'qty'],
  additionalProperties: false,
  properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 }, email: { type: 'string', format: 'email' } },
};

describe.each(SDK_KINDS)('payload validation with a %s worker', (kind: SdkKind) => {
  it('answers invalid_payload with the pointer and reason before the worker is called', async () => {
    const engine = await startTestEngine({ validate_payloads: true });
    const seen: unknown[] = [];
    await startWorker(kind, engine, (w) =>
      w.registerFunction(
        'orders::create',
        (data) => {
          seen.push(data);
          return { ok: true };
        },
        { request_format: ORDER_FORMAT },
      ),
    );
    const caller = await startWorker(kind, engine);
    const call = (payload: unknown) => outcome(caller.trigger({ function_id: 'orders::create', payload }));
    const cases: Array<[unknown, string]> = [
      [{ sku: 'a', qty: 'two' }, 'at /qty: must be integer'],
      [{ sku: 'a', qty: 0 }, 'at /qty: must be >= 1'],
      [{ sku: 'a' }, "at the top level: must have required property 'qty'"],
      [{ sku: 'a', qty: 1, colour: 'red' }, 'at the top level: must NOT have additional properties ("colour")'],
      [{ sku: 'a', qty: 1, email: 'not-an-address' }, 'at /email: must match format "email"'],
      [null, 'at the top level: must be object'],
    ];
    for (const [payload, reason] of cases) {
      const o = await call(payload);
      expect(o.ok, JSON.stringify(payload)).toBe(false);
      if (o.ok) continue;
      expect(o.error.code).toBe('invalid_payload');
      expect(o.error.message).toContain(`payload of orders::create does not match its request_format ${reason}`);
    }
    expect(seen).toEqual([]);
    expect(await call({ sku: 'a', qty: 2, email: 'ada@example.com' })).toEqual({ ok: true, value: { ok: true } });
    expect(seen).toHaveLength(1);
  });
});

describe('payload validation switches', () => {
  it('is off by default; metadata.validate turns it on for one function', async () => {
    const engine = await startTestEngine();
    await startWorker('flint', engine, (w) => {
      w.registerFunction('loose::fn', () => 'ran', { request_format: ORDER_FORMAT });
      w.registerFunction('strict::fn', () => 'ran', { request_format: ORDER_FORMAT, metadata: { validate: true } });
    });
    const caller = await startWorker('flint', engine);
    expect(await caller.trigger({ function_id: 'loose::fn', payload: { qty: 'x' } })).toBe('ran');
    const o = await outcome(caller.trigger({ function_id: 'strict::fn', payload: { qty: 'x' } }));
    expect(o.ok || o.error.code).toBe('invalid_payload');
  });

  it('understands 2020-12 schemas; an invalid schema is logged once and its calls are not validated', async () => {
    const { logger, records } = captureLog('warn');
    const engine = await startTestEngine({ validate_payloads: true }, { logger });
    await startWorker('flint', engine, (w) => {
      const tuple = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] };
      w.registerFunction('tuple::fn', () => 'ran', { request_format: tuple });
      w.registerFunction('broken::fn', () => 'ran', { request_format: { type: 'no-such-type' } });
    });
    const caller = await startWorker('flint', engine);
    expect(await caller.trigger({ function_id: 'tuple::fn', payload: ['a', 1] })).toBe('ran');
    const o = await outcome(caller.trigger({ function_id: 'tuple::fn', payload: ['a', 'b'] }));
    expect(o.ok || o.error.message).toContain('at /1: must be number');
    expect(await caller.trigger({ function_id: 'broken::fn', payload: 1 })).toBe('ran');
    const warned = await waitFor(() => records.filter((r) => r.function_id === 'broken::fn'), 1000, 'the warning');
    expect(warned).toHaveLength(1);
    expect(warned[0]?.msg).toContain('request_format of broken::fn is not a valid JSON Schema');
  });

  it('an HTTP route whose function does not accept the request answers 400 invalid_payload', async () => {
    const { engine, base } = await startHttpEngine({}, { validate_payloads: true });
    await startWorker('flint', engine, (w) => {
      // The function's input is the ApiRequest: require a body with a sku.
      w.registerFunction('orders::http', () => ({ status_code: 201, body: 'created' }), {
        request_format: { type: 'object', required: ['body'], properties: { body: { type: 'object', required: ['sku'] } } },
      });
      w.registerTrigger({ type: 'http', function_id: 'orders::http', config: { api_path: '/orders', http_method: 'POST' } });
    });
    const post = (body: unknown) =>
      fetchWithin(`${base}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bad = await post({ qty: 1 });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: 'invalid_payload', error: expect.stringContaining("at /body: must have required property 'sku'") });
    expect((await post({ sku: 'a' })).status).toBe(201);
  });
});
