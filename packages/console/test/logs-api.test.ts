/**
 * POST /_console/logs through flint-observability's `engine::logs::list`: a worker's lines (the SDK's
 * Logger inside a handler, so they carry the call's trace) come back newest first with every field;
 * the severity, text, trace and time filters narrow them; bad filters are 400; without the module, or
 * with logs_enabled: false, the answer says the logs are unavailable and why.
 */
import { Logger } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from './support/console-env.js';

describe('POST /_console/logs with flint-observability', () => {
  let env: ConsoleEnv;
  const service = uid('billing');
  const marker = uid('invoice');
  const fn = `${service}::charge`;
  let traceId: string;

  const logs = (filters: Json = {}) => env.api('POST', '/_console/logs', filters);

  beforeAll(async () => {
    env = await startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: { logs_max_count: 1000 } }] });
    const worker = await env.worker((w) => {
      const log = new Logger(w, service);
      w.registerFunction(fn, (input: Json) => {
        log.info(`charging ${marker}`, { amount: input.amount, currency: 'EUR' });
        log.warn(`card of ${marker} expires soon`, { card: 'visa-4242' });
        return { ok: true };
      });
    });
    await worker.trigger({ function_id: fn, payload: { amount: 42 } });
    const found = await waitFor(
      async () => {
        const res = await logs({ text: marker });
        return res.body.logs.length === 2 ? res.body : undefined;
      },
      5000,
      'the two lines of the handler',
    );
    traceId = found.logs[0].trace_id;
  });
  afterAll(() => env?.close());

  it('answers the lines newest first, each with all its fields and the trace of the call', async () => {
    const res = await logs({ text: marker });
    expect(res.status).toBe(200);
    expect(res.body.available).toBe(true);
    expect(res.body.total).toBe(2);
    const [warn, info] = res.body.logs;
    expect(warn).toMatchObject({ severity_text: 'WARN', severity_number: 13, body: `card of ${marker} expires soon`, service_name: service });
    expect(info).toMatchObject({
      severity_text: 'INFO',
      severity_number: 9,
      body: `charging ${marker}`,
      attributes: expect.objectContaining({ amount: 42, currency: 'EUR' }),
      service_name: service,
    });
    for (const line of [warn, info]) {
      expect(line.timestamp_unix_nano).toBeGreaterThan(0);
      expect(line.observed_timestamp_unix_nano).toBeGreaterThan(0);
      expect(line.resource).toEqual(expect.objectContaining({ 'service.name': 'flint' }));
      expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(warn.trace_id).toBe(info.trace_id);
    expect(warn.timestamp_unix_nano).toBeGreaterThanOrEqual(info.timestamp_unix_nano);
  });

  it('narrows by minimum severity (a level name or a number), text, trace id, service and time', async () => {
    const warnOnly = await logs({ text: marker, severity_min: 'warn' });
    expect(warnOnly.body.logs.map((l: Json) => l.severity_text)).toEqual(['WARN']);
    expect((await logs({ text: marker, severity_min: 17 })).body.total).toBe(0);
    expect((await logs({ text: marker, severity_min: 'INFO' })).body.total).toBe(2);

    // text matches attribute values too
    const byAttr = await logs({ text: 'visa-4242' });
    expect(byAttr.body.logs).toHaveLength(1);
    expect(byAttr.body.logs[0].body).toContain('expires soon');

    const byTrace = await logs({ trace_id: traceId.toUpperCase() });
    expect(byTrace.body.total).toBe(2);
    expect((await logs({ trace_id: '0123456789abcdef0123456789abcdef' })).body.total).toBe(0);

    expect((await logs({ service_name: service, text: marker })).body.total).toBe(2);
    expect((await logs({ text: marker, start_time: Date.now() + 60_000 })).body.total).toBe(0);
    expect((await logs({ text: marker, start_time: Date.now() - 60_000, end_time: Date.now() + 1000 })).body.total).toBe(2);
    // empty strings are no filter
    expect((await logs({ text: marker, trace_id: '', severity_min: '' })).body.total).toBe(2);
  });

  it('pages with offset and limit; total counts every match', async () => {
    const first = await logs({ text: marker, limit: 1 });
    expect(first.body.logs).toHaveLength(1);
    expect(first.body.total).toBe(2);
    const second = await logs({ text: marker, limit: 1, offset: 1 });
    expect(second.body.logs[0].severity_text).toBe('INFO');
  });

  it('refuses bad filters with 400 invalid_request', async () => {
    for (const bad of [
      { severity_min: 'loud' },
      { severity_min: 30 },
      { start_time: 'yesterday' },
      { limit: 5000 },
      { text: 3 },
      { start_time: 10, end_time: 5 },
    ]) {
      const res = await logs(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
  });

  it('requires the mutation header like every POST', async () => {
    const res = await env.api('POST', '/_console/logs', {}, { mutationHeader: false });
    expect(res.status).toBe(403);
  });
});

describe('POST /_console/logs without a log store', () => {
  it('says flint-observability is not loaded', async () => {
    const env = await startConsoleEnv();
    try {
      const res = await env.api('POST', '/_console/logs', {});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ available: false, reason: 'module_not_loaded', logs: [], total: 0 });
      expect(res.body.detail).toContain('flint-observability');
    } finally {
      await env.close();
    }
  });

  it('says logs_enabled is false', async () => {
    const env = await startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: { logs_enabled: false } }] });
    try {
      const res = await env.api('POST', '/_console/logs', { severity_min: 'warn' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ available: false, reason: 'logs_disabled', logs: [], total: 0 });
      expect(res.body.detail).toContain('logs_enabled');
    } finally {
      await env.close();
    }
  });
});
