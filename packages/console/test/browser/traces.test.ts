/**
 * The Traces page in Chromium against a real engine with flint-observability (exporter memory): a chain
 * HTTP → worker → worker shows up in the live list, each filter narrows the list, Pause stops the live
 * list, the four views and the span panel render the trace (screenshots in both themes), and a
 * 10,000-span trace's waterfall shows within a few seconds (the time is printed).
 */
import { FlintError, Logger, type Worker } from '@flint/sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceListResponse } from '../../src/api-types.js';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, startConsoleEnv, uid, waitFor } from '../support/console-env.js';

// The callbacks given to page.evaluate run in the page; the tests are compiled without the DOM library.
// biome-ignore lint/suspicious/noExplicitAny: the page's document, seen from a Node test
declare const document: any;
/** The flame graph's canvas, seen from a Node test. */
type PageCanvas = {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } };
};

describe.skipIf(browserMissing !== undefined)('the Traces page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  let front: Worker;
  let httpBase: string;
  const ns = uid('shop').replace('-', '');
  const route = `/${ns}/checkout`;
  let chainId = '';
  let failedId = '';

  /** The trace ids of the list's rows. */
  const rowIds = (page: Page) => page.getByTestId('trace-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id')));
  const listTraces = async (filters: Record<string, unknown>) =>
    (await env.api<TraceListResponse>('POST', '/_console/traces', { limit: 1000, ...filters })).body.traces;
  const setTheme = (page: Page, theme: 'light' | 'dark') =>
    page.evaluate((t) => {
      document.documentElement.dataset.theme = t;
    }, theme);
  /** Screenshots in both themes: `<name>-dark.png` and `<name>-light.png`. */
  const shots = async (page: Page, name: string) => {
    for (const theme of ['dark', 'light'] as const) {
      await setTheme(page, theme);
      await page.waitForTimeout(80);
      await screenshot(page, `${name}-${theme}`);
    }
  };

  beforeAll(async () => {
    [env, browser] = await Promise.all([
      startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: { exporter: 'memory', logs_exporter: 'memory', memory_max_spans: 30_000 } }] }),
      launchBrowser(),
    ]);
    httpBase = env.engine.listeners().find((l) => l.name === 'http')!.url;
    await env.worker(
      (w) => {
        w.registerFunction(`${ns}::price`, async (input: { sku: string }) => {
          if (input.sku === 'broken') throw new FlintError('out_of_stock', `no stock for ${input.sku}`);
          await new Promise((r) => setTimeout(r, 3));
          return { sku: input.sku, price: 12 };
        });
      },
      { spans: true, serviceName: `${ns}-back` },
    );
    // 10,000 spans in one trace: call big (1) → 99 × call mid → 100 × call leaf each (a worker without spans of its own).
    await env.worker((w) => {
      w.registerFunction(`${ns}::leaf`, () => 1);
      w.registerFunction(`${ns}::mid`, async () => {
        await Promise.all(Array.from({ length: 100 }, () => w.trigger({ function_id: `${ns}::leaf`, payload: {} })));
        return 100;
      });
      w.registerFunction(`${ns}::big`, async () => {
        for (let i = 0; i < 99; i += 11)
          await Promise.all(Array.from({ length: 11 }, () => w.trigger({ function_id: `${ns}::mid`, payload: {}, timeoutMs: 60_000 })));
        return 99;
      });
    });
    front = await env.worker(
      (w) => {
        const log = new Logger(w, `${ns}-front`);
        w.registerFunction(`${ns}::checkout`, async (req: { query_params?: Record<string, string> }) => {
          const sku = req.query_params?.sku ?? 'tea';
          log.info('pricing the basket', { sku });
          const price = await w.trigger({ function_id: `${ns}::price`, payload: { sku } });
          return { status_code: 200, body: price };
        });
        w.registerTrigger({ type: 'http', function_id: `${ns}::checkout`, config: { api_path: route, http_method: 'GET' } });
      },
      { spans: true, serviceName: `${ns}-front` },
    );
    await waitFor(async () => (await fetch(`${httpBase}${route}?sku=warmup`)).status === 200, 5000, 'the HTTP route');
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('shows a new trace of the chain HTTP → worker → worker in the live list without a reload', async () => {
    const { page } = cp;
    await cp.open('/traces');
    await page.getByTestId('trace-row').first().waitFor();
    const before = new Set(await rowIds(page));
    expect((await fetch(`${httpBase}${route}?sku=tea`)).status).toBe(200);
    expect((await fetch(`${httpBase}${route}?sku=broken`)).status).toBe(500);
    const chain = await waitFor(
      async () => (await listTraces({ name: route, status: 'ok' })).find((t) => !before.has(t.trace_id) && t.span_count === 5),
      8000,
      'the chain trace',
    );
    chainId = chain.trace_id;
    failedId = (await waitFor(async () => (await listTraces({ name: route, status: 'error' }))[0], 5000, 'the failed trace')).trace_id;
    // The page polls: the new row comes in by itself, newest first.
    await expect.poll(async () => (await rowIds(page)).includes(chainId), { timeout: 8000 }).toBe(true);
    const row = page.locator(`[data-testid="trace-row"][data-trace-id="${chainId}"]`);
    await expect.poll(async () => await row.locator('td').nth(5).textContent(), { timeout: 5000 }).toBe('5');
    const text = (await row.textContent()) ?? '';
    expect(text).toContain(`GET ${route}`);
    expect(text).toContain('flint');
    expect(text).toContain('OK');
    expect(await page.getByTestId('live-state').textContent()).toContain('Live');
    await shots(page, 'traces-list');
  });

  it('narrows the list with each filter, kept in the URL', async () => {
    const { page } = cp;
    const shows = async (path: string, id: string) => {
      await cp.open(path);
      await page.waitForFunction(() => document.querySelector('[data-testid="trace-table"], .empty'));
      return (await rowIds(page)).includes(id);
    };
    const q = (s: string) => `/traces?${s}`;
    // Trace id.
    expect(await shows(q(`id=${chainId}`), chainId)).toBe(true);
    expect(await rowIds(page)).toEqual([chainId]);
    expect(await shows(q(`id=${failedId}`), chainId)).toBe(false);
    // Service of the root span (substring).
    expect(await shows(q('service=fli'), chainId)).toBe(true);
    expect(await shows(q('service=nothing-like-it'), chainId)).toBe(false);
    // Span name (any span of the trace by default; the root only with root=true).
    expect(await shows(q(`name=handle%20${ns}::price`), chainId)).toBe(true);
    expect(await shows(q(`name=handle%20${ns}::price&root=true`), chainId)).toBe(false);
    // Status.
    expect(await shows(q('status=ok'), chainId)).toBe(true);
    expect(await shows(q('status=error'), chainId)).toBe(false);
    expect(await rowIds(page)).toContain(failedId);
    expect(await shows(q('status=unset'), chainId)).toBe(false);
    // Duration range (ms).
    expect(await shows(q('min=0&max=60000'), chainId)).toBe(true);
    expect(await shows(q('min=60000'), chainId)).toBe(false);
    // Time range.
    expect(await shows(q('range=15m'), chainId)).toBe(true);
    const hourAgo = Date.now() - 3_600_000;
    expect(await shows(q(`range=custom&from=${hourAgo - 60_000}&to=${hourAgo}`), chainId)).toBe(false);
    expect(await shows(q(`range=custom&from=${hourAgo}`), chainId)).toBe(true);
    // Attributes (key=value, all required).
    expect(await shows(q(`attr=${encodeURIComponent(`http.route=${route}`)}`), chainId)).toBe(true);
    expect(await shows(q(`attr=${encodeURIComponent('http.response.status_code=500')}`), chainId)).toBe(false);
    expect(await rowIds(page)).toContain(failedId);

    // The same through the controls: typing updates the URL and the list.
    await cp.open('/traces');
    await page.getByTestId('trace-row').first().waitFor();
    await page.getByTestId('filter-service').fill('nothing-like-it');
    await expect.poll(() => page.url()).toContain('service=nothing-like-it');
    await expect.poll(async () => (await rowIds(page)).length).toBe(0);
    await page.getByTestId('clear-filters').click();
    await expect.poll(async () => (await rowIds(page)).includes(chainId)).toBe(true);
    await page.getByTestId('filter-name').fill(route);
    await page.getByTestId('filter-status').selectOption('error');
    await expect.poll(async () => await rowIds(page)).toEqual([failedId]);
    await page.getByTestId('filter-status').selectOption('ok');
    await page.getByTestId('filter-min').fill('0');
    await page.getByTestId('filter-max').fill('60000');
    await page.getByTestId('filter-range').selectOption('1h');
    await page.getByTestId('filter-attr-input').fill(`http.route=${route}`);
    await page.getByTestId('filter-attr-add').click();
    await expect.poll(() => page.url()).toContain('range=1h');
    await expect.poll(async () => (await rowIds(page)).includes(chainId)).toBe(true);
    expect(await rowIds(page)).not.toContain(failedId);
    await page.getByTestId('filter-trace-id').fill(chainId);
    await expect.poll(async () => await rowIds(page)).toEqual([chainId]);
    await shots(page, 'traces-filters');
    await page.getByTestId('filter-attr-input').fill('http.response.status_code=500');
    await page.getByTestId('filter-attr-add').click();
    await expect.poll(async () => (await rowIds(page)).length).toBe(0);
    expect(await page.getByTestId('filter-attr-chip').count()).toBe(2);
  });

  it('stops refreshing while paused and catches up on Resume', async () => {
    const { page } = cp;
    await cp.open(`/traces?name=${encodeURIComponent(route)}`);
    await page.getByTestId('trace-row').first().waitFor();
    await page.getByTestId('pause-button').click();
    expect(await page.getByTestId('live-state').textContent()).toContain('Paused');
    const before = new Set(await rowIds(page));
    expect((await fetch(`${httpBase}${route}?sku=paused`)).status).toBe(200);
    const fresh = await waitFor(async () => (await listTraces({ name: route })).find((t) => !before.has(t.trace_id)), 5000, 'the new trace');
    await page.waitForTimeout(3500);
    expect(await rowIds(page)).not.toContain(fresh.trace_id);
    await page.getByTestId('pause-button').click();
    await expect.poll(async () => (await rowIds(page)).includes(fresh.trace_id), { timeout: 6000 }).toBe(true);
  });

  it('opens the trace in its four views and shows a span in the detail panel', async () => {
    const { page } = cp;
    await cp.open(`/traces?name=${encodeURIComponent(route)}`);
    await page.locator(`[data-testid="trace-row"][data-trace-id="${chainId}"] a`).click();
    await expect.poll(() => page.url()).toContain(`trace=${chainId}`);

    // Waterfall: every span on the shared axis, the critical path marked.
    const rows = page.getByTestId('waterfall-row');
    await expect.poll(() => rows.count()).toBe(5);
    expect(await page.getByTestId('trace-span-count').textContent()).toBe('5');
    expect(await rows.evaluateAll((r) => r.map((x) => x.querySelector('.trc-wf-name')?.textContent))).toEqual([
      `GET ${route}`,
      `call ${ns}::checkout`,
      `handle ${ns}::checkout`,
      `call ${ns}::price`,
      `handle ${ns}::price`,
    ]);
    expect(await page.locator('.trc-wf-row.critical').count()).toBe(5);
    await shots(page, 'traces-waterfall');
    // Fold the handler: its call and the callee's span go.
    await rows.nth(2).locator('.trc-fold').click();
    await expect.poll(() => rows.count()).toBe(3);
    await rows.nth(2).locator('.trc-fold').click();
    await expect.poll(() => rows.count()).toBe(5);

    // A span: info, tags, logs, errors, baggage.
    await rows.nth(2).click();
    await expect.poll(() => page.url()).toContain('span=');
    const detail = page.getByTestId('span-detail');
    await detail.waitFor();
    expect(await detail.textContent()).toContain(`handle ${ns}::checkout`);
    expect(await page.getByTestId('span-panel-info').textContent()).toContain(`${ns}-front`);
    await page.getByTestId('span-tab-tags').click();
    expect(await page.getByTestId('span-panel-tags').textContent()).toContain(`${ns}::checkout`);
    await page.getByTestId('span-tab-logs').click();
    await expect.poll(() => page.getByTestId('span-log').count(), { timeout: 5000 }).toBe(1);
    expect(await page.getByTestId('span-log').textContent()).toContain('pricing the basket');
    await expect.poll(() => page.url()).toContain('tab=logs');
    await shots(page, 'traces-span-logs');
    await page.getByTestId('span-tab-errors').click();
    expect(await page.getByTestId('span-panel-errors').textContent()).toContain('No error');
    await page.getByTestId('span-tab-baggage').click();
    expect(await page.getByTestId('span-panel-baggage').textContent()).toContain('No baggage');

    // Flame graph: a canvas; hovering shows the span, clicking selects it.
    await page.getByTestId('view-flame').click();
    await expect.poll(() => page.url()).toContain('view=flame');
    const canvas = page.getByTestId('flame-canvas');
    await canvas.waitFor();
    const box = (await canvas.boundingBox())!;
    expect(box.width).toBeGreaterThan(200);
    // Row 0 (the root span) spans the whole width.
    await page.mouse.move(box.x + box.width / 2, box.y + 10);
    await expect.poll(async () => (await page.getByTestId('flame-tooltip').textContent()) ?? '').toContain(`GET ${route}`);
    await shots(page, 'traces-flame');
    await page.mouse.click(box.x + box.width / 2, box.y + 10);
    await expect.poll(async () => (await detail.textContent()) ?? '').toContain(`GET ${route}`);
    // The canvas is painted with the theme's colours (not blank).
    const painted = await canvas.evaluate((el) => {
      const c = el as unknown as PageCanvas;
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const colours = new Set<number>();
      for (let i = 0; i < data.length; i += 16) colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
      return colours.size;
    });
    expect(painted).toBeGreaterThan(3);

    // Service breakdown: per service and per function, with self time.
    await page.getByTestId('view-services').click();
    const services = page.getByTestId('breakdown-service-row');
    await expect.poll(() => services.count()).toBe(3);
    const serviceText = await page.getByTestId('breakdown-services').textContent();
    expect(serviceText).toContain(`${ns}-front`);
    expect(serviceText).toContain(`${ns}-back`);
    expect(await page.getByTestId('breakdown-function-row').count()).toBe(5);
    await shots(page, 'traces-services');

    // Trace map: 5 nodes (what ran, per service) and 4 calls.
    await page.getByTestId('view-map').click();
    await expect.poll(() => page.getByTestId('map-node').count()).toBe(5);
    expect(await page.getByTestId('map-edge').count()).toBe(4);
    expect(await page.getByTestId('trace-map').textContent()).toContain('×1');
    await shots(page, 'traces-map');
    await page.getByTestId('map-node').last().click();
    await expect.poll(async () => (await detail.textContent()) ?? '').toContain(`handle ${ns}::price`);
    expect(cp.errors).toEqual([]);
  });

  it('shows a failed call’s exception in the errors tab', async () => {
    const { page } = cp;
    await cp.open(`/traces?trace=${failedId}`);
    const failed = page.locator('.trc-wf-row.error', { hasText: `call ${ns}::price` });
    await failed.waitFor();
    await failed.click();
    await page.getByTestId('span-tab-errors').click();
    const error = page.getByTestId('span-error').first();
    await error.waitFor();
    expect(await error.textContent()).toContain('out_of_stock');
    expect(await error.textContent()).toContain('no stock for broken');
    await shots(page, 'traces-span-errors');
  });

  it('renders the waterfall of a 10,000-span trace within a few seconds', async () => {
    const { page } = cp;
    await front.trigger({ function_id: `${ns}::big`, payload: {}, timeoutMs: 120_000 });
    const big = await waitFor(
      async () => (await listTraces({ name: `call ${ns}::big` })).find((t) => (t.span_count ?? 0) >= 10_000),
      15_000,
      'the 10,000-span trace',
    );
    expect(big.span_count).toBe(10_000);
    await cp.open(`/traces?name=${encodeURIComponent(`call ${ns}::big`)}&root=true`);
    const link = page.locator(`[data-testid="trace-row"][data-trace-id="${big.trace_id}"] a`);
    await link.waitFor();
    const answered = page.waitForResponse((r) => r.url().endsWith(`/_console/traces/${big.trace_id}`));
    const started = Date.now();
    await link.click();
    await page.getByTestId('waterfall-row').first().waitFor({ state: 'visible' });
    const elapsed = Date.now() - started;
    const response = await answered;
    const timing = response.request().timing();
    await response.finished();
    const bytes = (await response.body()).length;
    console.log(
      `10,000-span trace: waterfall rows visible ${elapsed} ms after selecting it (the API answered ${(bytes / 1e6).toFixed(1)} MB in ${Math.round(timing.responseEnd)} ms of it)`,
    );
    expect(elapsed).toBeLessThan(5000);
    expect(await page.getByTestId('trace-span-count').textContent()).toBe('10,000');
    // Only the rows in view are in the DOM.
    expect(await page.getByTestId('waterfall-row').count()).toBeLessThan(200);
    await shots(page, 'traces-10k-waterfall');
    // Scrolling to the end stays responsive: the last span comes into view.
    const scroll = page.getByTestId('waterfall-scroll');
    const t0 = Date.now();
    await scroll.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await expect.poll(async () => page.getByTestId('waterfall-row').last().getAttribute('aria-level')).toBe('3');
    console.log(`10,000-span trace: scrolled to the last span in ${Date.now() - t0} ms`);
    await page.getByTestId('view-flame').click();
    await page.getByTestId('flame-canvas').waitFor();
    await shots(page, 'traces-10k-flame');
    await page.getByTestId('view-map').click();
    await expect.poll(() => page.getByTestId('map-node').count()).toBe(3);
    expect(await page.getByTestId('trace-map').textContent()).toContain('×9,900');
    expect(cp.errors).toEqual([]);
  });
});
