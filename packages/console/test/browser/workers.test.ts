/**
 * The Workers page in Chromium: of a single engine (one table, no grouping), and of engine a of a
 * cluster on NATS with engine b (one section per engine, this engine first; filter, selection and the
 * workers of the other engine coming and going). The cluster part needs NATS (FLINT_TEST_NATS_URL,
 * default nats://127.0.0.1:4222) and is skipped without it.
 */
import type { Engine } from '@flint/engine';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, startConsoleEnv, startTestEngine, uid } from '../support/console-env.js';
import { NATS_URL, clusterConfig, gateService, natsAvailable } from '../support/services.js';

const runNats = browserMissing === undefined && gateService('the Workers page in a cluster on NATS', await natsAvailable(NATS_URL));

/** The worker names of the rows in `scope`, top to bottom. */
const rowNames = async (page: Page, scope?: string): Promise<string[]> => {
  const base = scope ? page.locator(`[data-testid="engine-group"][data-engine="${scope}"]`) : page;
  return (await base.getByTestId('worker-row').locator('a').allTextContents()).map((t) => t.trim());
};
const groupsShown = (page: Page) => page.getByTestId('engine-group').evaluateAll((els) => els.map((el) => el.getAttribute('data-engine')));

describe.skipIf(browserMissing !== undefined)('the Workers page of a single engine (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const first = uid('orders');
  const second = uid('billing');

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    await env.worker((w) => w.registerFunction(`${first}::place`, () => 'ok'), { workerName: first });
    await env.worker((w) => w.registerFunction(`${second}::charge`, () => 'ok'), { workerName: second });
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('lists the workers in one table, oldest first, without engine sections', async () => {
    const { page } = cp;
    await cp.open('/workers');
    await expect.poll(() => rowNames(page)).toEqual([first, second]);
    expect(await page.locator('table.workers-table').count()).toBe(1);
    expect(await page.getByTestId('engine-group').count()).toBe(0);
    expect(await page.getByTestId('cluster-summary').count()).toBe(0);
    expect(await page.getByRole('searchbox', { name: 'Filter workers' }).getAttribute('placeholder')).toBe('Filter by name, id or runtime  ( / )');
    await screenshot(page, 'workers-single-engine');

    await page.getByRole('searchbox', { name: 'Filter workers' }).fill(second);
    await expect.poll(() => rowNames(page)).toEqual([second]);
    await page.getByRole('link', { name: second }).click();
    await expect.poll(() => page.getByTestId('worker-detail').textContent()).toContain(`${second}::charge`);
    expect(await page.getByTestId('worker-engine').count()).toBe(0);
    expect(cp.errors).toEqual([]);
  });
});

describe.skipIf(!runNats)('the Workers page of engine a, in a cluster with engine b (Chromium)', () => {
  const name = uid('console-ui');
  let env: ConsoleEnv;
  let b: Engine;
  let browser: Browser;
  let cp: ConsolePage;
  const a1 = uid('orders');
  const a2 = uid('billing');
  const b1 = uid('shipping');

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv({ cluster: clusterConfig(name, 'a') }), launchBrowser()]);
    b = await startTestEngine(undefined, { cluster: clusterConfig(name, 'b') });
    // One after the other: the page lists each engine's workers oldest first.
    await env.worker((w) => w.registerFunction(`${a1}::place`, () => 'ok'), { workerName: a1 });
    await env.worker((w) => w.registerFunction(`${a2}::charge`, () => 'ok'), { workerName: a2 });
    await env.worker((w) => w.registerFunction(`${b1}::ship`, () => 'ok'), { workerName: b1 }, b);
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
    await b?.stop();
  });

  it('shows one section per engine, this engine first, each with its own workers', async () => {
    const { page } = cp;
    await cp.open('/workers');
    await expect.poll(() => groupsShown(page)).toEqual(['a', 'b']);
    await expect.poll(() => rowNames(page, 'a')).toEqual([a1, a2]);
    await expect.poll(() => rowNames(page, 'b')).toEqual([b1]);
    expect(await page.getByRole('heading', { level: 2, name: 'This engine a' }).isVisible()).toBe(true);
    expect(await page.getByRole('heading', { level: 2, name: 'b', exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.page-header .count-badge').textContent()).toBe('3');

    // From engine::cluster::members: each engine's bridge, and when the other one was heard from.
    const meta = (node: string) => page.locator(`[data-testid="engine-group"][data-engine="${node}"]`).getByTestId('engine-meta').textContent();
    await expect.poll(() => meta('b')).toMatch(/heard .+ ago/);
    expect(await meta('b')).toContain(b.bridgeUrl);
    expect(await meta('a')).toContain(env.engine.bridgeUrl);
    expect(await meta('a')).not.toContain('heard');
    expect(await page.getByTestId('cluster-summary').textContent()).toBe(`cluster ${name} · 2 engines`);
    await screenshot(page, 'workers-cluster');
    expect(cp.errors).toEqual([]);
  });

  it('selects a worker of either engine, and its details name the engine', async () => {
    const { page } = cp;
    await cp.open('/workers');
    await page.getByRole('link', { name: b1 }).click();
    await expect.poll(() => page.url()).toContain('worker=');
    await expect.poll(() => page.getByTestId('worker-engine').textContent()).toBe('b');
    expect(await page.getByTestId('worker-detail').textContent()).toContain(`${b1}::ship`);
    expect(await page.locator('[data-testid="worker-row"].selected').locator('a').textContent()).toBe(b1);
    await page.getByRole('link', { name: a1 }).click();
    await expect.poll(() => page.getByTestId('worker-engine').textContent()).toBe('a (this engine)');
    await screenshot(page, 'workers-cluster-detail');
  });

  it('filters across the engines, keeping only the sections with a match', async () => {
    const { page } = cp;
    await cp.open('/workers');
    await expect.poll(() => groupsShown(page)).toEqual(['a', 'b']);
    const filter = page.getByRole('searchbox', { name: 'Filter workers' });
    expect(await filter.getAttribute('placeholder')).toBe('Filter by name, id, runtime or engine  ( / )');
    await filter.fill(b1);
    await expect.poll(() => groupsShown(page)).toEqual(['b']);
    expect(await rowNames(page, 'b')).toEqual([b1]);
    expect(await page.locator('[data-engine="b"] .count-badge').textContent()).toBe('1 of 1');
    expect(await page.locator('.page-header .count-badge').textContent()).toBe('1 of 3');
    // The filter is in the address bar, so the view survives a reload.
    await page.reload();
    await expect.poll(() => groupsShown(page)).toEqual(['b']);
    await filter.fill('');
    await expect.poll(() => groupsShown(page)).toEqual(['a', 'b']);
  });

  it("follows the other engine's workers coming and going", async () => {
    const { page } = cp;
    await cp.open('/workers');
    await expect.poll(() => rowNames(page, 'b')).toEqual([b1]);
    // A worker without functions: its coming and going is not pushed to engine a (only function changes
    // are), so the page learns of it by polling while the workers carry `engine`.
    const b2 = uid('returns');
    const late = await env.worker(undefined, { workerName: b2 }, b);
    await expect.poll(() => rowNames(page, 'b'), { timeout: 10_000 }).toEqual([b1, b2]);
    await late.shutdown();
    await expect.poll(() => rowNames(page, 'b'), { timeout: 10_000 }).toEqual([b1]);
    expect(await rowNames(page, 'a')).toEqual([a1, a2]);
    expect(cp.errors).toEqual([]);
  });
});
