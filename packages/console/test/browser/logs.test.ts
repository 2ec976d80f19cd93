/**
 * The Logs page in Chromium: a worker's Logger lines show up (live, newest first), the severity, text
 * and trace filters narrow them (and land in the URL), a line expands to all its fields, its trace
 * link carries the trace id, Pause holds the tail; without flint-observability the page says how to
 * turn logs on.
 */
import { Logger } from '@flint/sdk';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, type Json, sleep, startConsoleEnv, uid, waitFor } from '../support/console-env.js';

describe.skipIf(browserMissing !== undefined)('the Logs page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const service = uid('shop');
  const marker = uid('order');
  const fn = `${service}::place`;
  let log: Logger;
  let traceA: string;
  let traceB: string;

  const rows = () => cp.page.getByTestId('log-row').filter({ hasText: marker });
  const traceOf = async (text: string): Promise<string> => {
    const res = await env.api('POST', '/_console/logs', { text });
    return res.body.logs[0].trace_id;
  };

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: {} }] }), launchBrowser()]);
    const worker = await env.worker((w) => {
      log = new Logger(w, service);
      w.registerFunction(fn, (input: Json) => {
        log.info(`order ${marker}-${input.n} accepted`, { order: input.n, customer: 'ada' });
        log.warn(`stock for ${marker}-${input.n} is low`, { sku: `sku-${input.n}` });
        if (input.n === 2) log.error(`payment for ${marker}-${input.n} failed`, { reason: 'card declined' });
        return null;
      });
    });
    await worker.trigger({ function_id: fn, payload: { n: 1 } });
    await worker.trigger({ function_id: fn, payload: { n: 2 } });
    await waitFor(async () => (await env.api('POST', '/_console/logs', { text: marker })).body.total === 5, 5000, 'the five lines');
    traceA = await traceOf(`${marker}-1 accepted`);
    traceB = await traceOf(`${marker}-2 accepted`);
    expect(traceA).not.toBe(traceB);
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('shows the lines a worker logged, newest first, with level, service and body', async () => {
    const { page } = cp;
    await cp.open('/logs');
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(5);
    const first = (await rows().first().textContent()) ?? '';
    expect(first).toContain(`payment for ${marker}-2 failed`);
    expect(first).toContain('ERROR');
    expect(first).toContain(service);
    await expect.poll(() => page.getByTestId('tail-status').textContent()).toContain('Live');
    await screenshot(page, 'logs-list');
  });

  it('narrows by minimum severity, then by text, both kept in the URL', async () => {
    const { page } = cp;
    await cp.open('/logs');
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(5);
    await page.getByTestId('level-filter').selectOption('warn');
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(3);
    expect(page.url()).toContain('severity=warn');
    for (const level of await rows().evaluateAll((els) => els.map((e) => e.getAttribute('data-level')))) expect(['warn', 'error']).toContain(level);

    await page.getByTestId('level-filter').selectOption('error');
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(1);

    await page.getByTestId('level-filter').selectOption('');
    await page.getByTestId('text-filter').fill(`stock for ${marker}-1`);
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(1);
    await expect.poll(() => page.url()).toContain('q=stock');
    // Text matches attribute values too.
    await page.getByTestId('text-filter').fill('card declined');
    await expect.poll(() => page.getByTestId('log-row').first().textContent(), { timeout: 5000 }).toContain(`payment for ${marker}-2 failed`);
    expect(await page.getByTestId('log-row').count()).toBe(1);

    // A shared link restores the filters.
    await cp.open(`/logs?severity=warn&q=${encodeURIComponent(marker)}`);
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(3);
    expect(await page.getByTestId('level-filter').inputValue()).toBe('warn');
    expect(await page.getByTestId('text-filter').inputValue()).toBe(marker);
  });

  it('narrows by trace id; the trace link and "logs of this trace" carry it', async () => {
    const { page } = cp;
    await cp.open('/logs');
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(5);
    await page.getByTestId('trace-filter').fill(traceA);
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(2);
    await expect.poll(() => page.url()).toContain(`trace_id=${traceA}`);
    for (const text of await rows().allTextContents()) expect(text).toContain(`${marker}-1`);

    const link = rows().first().getByTestId('log-trace-link');
    const href = (await link.getAttribute('href')) ?? '';
    expect(href).toContain('/traces?');
    const params = new URL(href, env.url).searchParams;
    expect(params.get('trace')).toBe(traceA);
    expect(params.get('span')).toMatch(/^[0-9a-f]{16}$/);

    // The line's fields, in the record's shape.
    await rows().first().getByRole('button', { expanded: false }).click();
    const detail = page.getByTestId('log-detail');
    await detail.waitFor();
    const text = (await detail.textContent()) ?? '';
    for (const field of ['timestamp_unix_nano', 'severity_text', 'body', 'attributes', 'trace_id', 'span_id', 'service_name', 'resource'])
      expect(text).toContain(field);
    expect(text).toContain(traceA);
    expect(text).toContain(service);
    const back = (await detail.getByTestId('log-trace-filter').getAttribute('href')) ?? '';
    expect(new URL(back, env.url).pathname).toBe('/logs');
    expect(new URL(back, env.url).searchParams.get('trace_id')).toBe(traceA);
    expect(new URL((await detail.getByTestId('log-open-trace').getAttribute('href')) ?? '', env.url).searchParams.get('trace')).toBe(traceA);
    await screenshot(page, 'logs-trace-expanded');

    // The link from the Traces page: one trace's lines at any time.
    await cp.open(`/logs?trace_id=${traceB}`);
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(3);
    expect(await page.getByTestId('trace-filter').inputValue()).toBe(traceB);
  });

  it('tails: a new line appears at the top without a reload; Pause holds it until Resume', async () => {
    const { page } = cp;
    await cp.open(`/logs?q=${encodeURIComponent(marker)}`);
    await expect.poll(() => rows().count(), { timeout: 5000 }).toBe(5);
    log.info(`late ${marker} line one`, { late: true });
    await expect.poll(() => rows().first().textContent(), { timeout: 6000 }).toContain(`late ${marker} line one`);
    expect(await rows().count()).toBe(6);

    await page.getByTestId('pause-button').click();
    await expect.poll(() => page.getByTestId('tail-status').textContent()).toContain('Paused');
    log.warn(`late ${marker} line two`);
    await waitFor(async () => (await env.api('POST', '/_console/logs', { text: 'line two' })).body.total === 1, 3000, 'the second line stored');
    await sleep(2600);
    expect(await rows().count()).toBe(6);

    await page.getByTestId('pause-button').click();
    await expect.poll(() => rows().first().textContent(), { timeout: 6000 }).toContain(`late ${marker} line two`);
    expect(await rows().count()).toBe(7);
    await screenshot(page, 'logs-tail');
    expect(cp.errors).toEqual([]);
  });

  it('keeps thousands of lines in a virtualised list; Load older pages back without duplicates', async () => {
    const { page } = cp;
    const bulk = uid('bulk');
    const n = 2500;
    const w = await env.worker();
    await Promise.all(
      Array.from({ length: n }, (_, i) => w.trigger({ function_id: 'engine::log::info', payload: { message: `${bulk} line ${i}`, service_name: service } })),
    );
    await waitFor(async () => (await env.api('POST', '/_console/logs', { text: bulk, limit: 1 })).body.total === n, 10_000, 'the bulk lines');

    await cp.open(`/logs?q=${bulk}`);
    const count = page.getByTestId('log-count');
    await expect.poll(() => count.textContent(), { timeout: 5000 }).toBe('1,000+ lines');
    // Only the rows in view (and a few around) are in the DOM.
    expect(await page.getByTestId('log-row').count()).toBeLessThan(80);
    expect(await page.getByTestId('log-row').first().textContent()).toContain(`${bulk} line ${n - 1}`);

    // Each page holds up to 1,000 records, those at the oldest instant held included (not listed twice).
    const shown = async () => Number(((await count.textContent()) ?? '').replace(/[^\d]/g, ''));
    await page.getByTestId('load-older').click({ timeout: 10_000 });
    await expect.poll(shown, { timeout: 5000 }).toBeGreaterThan(1900);
    for (let i = 0; i < 3 && (await page.getByTestId('load-older').count()) > 0; i++) {
      const before = await shown();
      await page.getByTestId('load-older').click({ timeout: 10_000 });
      await expect.poll(shown, { timeout: 5000 }).toBeGreaterThan(before);
    }
    await expect.poll(() => count.textContent()).toBe('2,500 lines');
    await expect.poll(() => page.getByTestId('load-older').count()).toBe(0);

    // The oldest line is at the end of the list.
    await page.getByTestId('log-list').evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
    await expect.poll(() => page.getByTestId('log-row').last().textContent()).toContain(`${bulk} line 0`);
    expect(await page.getByTestId('log-row').count()).toBeLessThan(80);
    await screenshot(page, 'logs-bulk');
    expect(cp.errors).toEqual([]);
  }, 60_000);
});

describe.skipIf(browserMissing !== undefined)('the Logs page without flint-observability (Chromium)', () => {
  it('explains how to turn logs on', async () => {
    const [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    const cp = await openConsolePage(browser, env.url);
    try {
      await cp.open('/logs');
      const box = cp.page.getByTestId('logs-unavailable');
      await box.waitFor({ timeout: 5000 });
      const text = (await box.textContent()) ?? '';
      expect(text).toContain('flint-observability');
      expect(text).toContain('logs_enabled');
      await screenshot(cp.page, 'logs-unavailable');
      expect(cp.errors).toEqual([]);
    } finally {
      await cp.close();
      await browser.close();
      await env.close();
    }
  });
});
