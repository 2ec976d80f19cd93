/**
 * The Dashboard in Chromium: registry counts with links, the invocation figures moving after a burst of
 * calls (the console's sampler history), recent errors linking to their trace, queue depth and dead
 * letters; and, without flint-observability, a card saying how to turn metrics on while the rest works.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, type Json, startConsoleEnv, uid } from '../support/console-env.js';

const numberIn = (text: string | null) => Number((text ?? '').replace(/[^0-9.]/g, ''));

describe.skipIf(browserMissing !== undefined)('the Dashboard (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const ns = uid('dash');
  const work = `${ns}::work`;
  const broken = `${ns}::broken`;
  const topic = `${ns}-jobs`;

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: {} }] }), launchBrowser()]);
    const w = await env.worker((w) => {
      w.registerFunction(work, (input: Json) => ({ ok: true, n: input?.n }));
      w.registerFunction(broken, () => {
        throw new Error('the disk is full');
      });
    });
    await Promise.all([
      w.registerTrigger({ type: 'http', function_id: work, config: { api_path: `${ns}/work`, http_method: 'POST' } }).ready,
      w.registerTrigger({ type: 'cron', function_id: work, config: { expression: '0 0 1 1 *' } }).ready,
      w.registerTrigger({ type: 'durable:subscriber', function_id: broken, config: { topic, queue_config: { max_retries: 0 } } }).ready,
    ]);
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('shows the registry counts, each linking to its page, and triggers by type', async () => {
    const { page } = cp;
    await cp.open('/');
    const workers = page.getByTestId('dash-workers');
    await expect.poll(async () => numberIn(await workers.locator('.registry-count').textContent())).toBeGreaterThanOrEqual(1);
    await expect.poll(async () => numberIn(await page.getByTestId('dash-functions').locator('.registry-count').textContent())).toBeGreaterThanOrEqual(2);
    const http = page.locator('[data-testid="dash-trigger-type"][data-type="http"]');
    await http.waitFor();
    expect(await page.locator('[data-testid="dash-trigger-type"][data-type="cron"]').count()).toBe(1);
    await http.click();
    await page.waitForURL(/\/triggers\?type=http/);
    await page.goBack();
    await page.getByTestId('dash-workers').click();
    await page.waitForURL(/\/workers$/);
    expect(cp.errors).toEqual([]);
  });

  it('moves the invocation figures after a burst of 50 calls', async () => {
    const { page } = cp;
    await cp.open('/');
    const total = page.getByTestId('metric-total');
    await total.waitFor();
    const before = numberIn(await total.textContent());
    for (let i = 0; i < 50; i++) await env.api('POST', '/_console/invoke', { function_id: work, input: { n: i } });
    // The console samples the engine every 2 s and the page polls every 2 s.
    await expect.poll(async () => numberIn(await total.textContent()), { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 50);
    await expect.poll(async () => numberIn(await page.getByTestId('metric-rate').textContent()), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.getByTestId('metric-latency').textContent()).toMatch(/ms|s/);
    expect(await page.locator('svg.sparkline path.sparkline-line').count()).toBeGreaterThanOrEqual(4);
    await expect.poll(async () => (await page.locator('svg.sparkline path.tone-accent').first().getAttribute('d')) ?? '').toMatch(/^M/);
    await screenshot(page, 'dashboard-after-burst');
    expect(cp.errors).toEqual([]);
  });

  it('lists a failed call among the recent errors, linking to its trace', async () => {
    const { page } = cp;
    await cp.open('/');
    await env.api('POST', '/_console/invoke', { function_id: broken, input: {} });
    const item = page.getByTestId('dash-error').filter({ hasText: broken }).first();
    await item.waitFor({ timeout: 10_000 });
    expect(await item.textContent()).toContain('the disk is full');
    const traceId = await item.getAttribute('data-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await item.getByRole('link').first().getAttribute('href')).toBe(`/traces?trace=${traceId}`);
    await expect.poll(async () => numberIn(await page.getByTestId('metric-errors').textContent()), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await screenshot(page, 'dashboard-recent-errors');
  });

  it('shows queue depth and dead letters, linking to the dead letters of the topic', async () => {
    const { page } = cp;
    await cp.open('/');
    await page.getByTestId('dash-queue-depth').waitFor({ timeout: 10_000 });
    // The subscriber fails and is not retried: the message is dead at once.
    await env.engine.invoke('flint::durable::publish', { topic, data: { job: 1 } });
    await expect.poll(async () => numberIn(await page.getByTestId('dash-dead-letters').textContent()), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const link = page.getByRole('link', { name: topic });
    await link.waitFor({ timeout: 10_000 });
    expect(await link.getAttribute('href')).toBe(`/queues?queue=${topic}&tab=dead`);
    await screenshot(page, 'dashboard-dead-letters');
  });
});

describe.skipIf(browserMissing !== undefined)('the Dashboard without flint-observability (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    await env.worker((w) => w.registerFunction(`${uid('plain')}::hi`, () => 'hi'));
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('says how to turn metrics on, and the registry, queues and errors panels still work', async () => {
    const { page } = cp;
    await cp.open('/');
    const off = page.getByTestId('metrics-off');
    await off.waitFor();
    expect(await off.textContent()).toContain('flint-observability');
    expect(await off.textContent()).toContain('metrics_enabled: true');
    await expect.poll(async () => numberIn(await page.getByTestId('dash-workers').locator('.registry-count').textContent())).toBeGreaterThanOrEqual(1);
    await page.getByTestId('dash-queue-depth').waitFor();
    expect(await page.getByTestId('dash-errors-off').textContent()).toContain('flint-observability');
    await screenshot(page, 'dashboard-metrics-off');
    expect(cp.errors).toEqual([]);
  });
});
