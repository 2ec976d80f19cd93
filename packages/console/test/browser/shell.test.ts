/**
 * The shell in Chromium: every page renders with its landmarks, the engine pill, the command palette by
 * keyboard, the theme switch, and the Workers and Config pages against a real engine.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, startConsoleEnv, uid } from '../support/console-env.js';

// The callbacks given to page.evaluate run in the page; the tests are compiled without the DOM library.
// biome-ignore lint/suspicious/noExplicitAny: the page's document, seen from a Node test
declare const document: any;
// biome-ignore lint/suspicious/noExplicitAny: a page element, seen from a Node test
type PageElement = any;

describe.skipIf(browserMissing !== undefined)('the console shell (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const workerName = uid('billing');
  const fn = `${uid('billing')}::charge`;

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    await env.worker((w) => w.registerFunction(fn, () => 'ok', { description: 'Charges a card' }), { workerName });
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('renders every page with a nav landmark, a main landmark and a heading, and no errors', async () => {
    const { page } = cp;
    for (const [path, heading] of [
      ['/workers', 'Workers'],
      ['/functions', 'Functions'],
      ['/triggers', 'Triggers'],
      ['/states', 'States'],
      ['/queues', 'Queues'],
      ['/config', 'Config'],
    ] as const) {
      await cp.open(path);
      await expect.poll(() => page.getByRole('heading', { level: 1, name: heading }).isVisible()).toBe(true);
      expect(await page.getByRole('navigation', { name: 'Console pages' }).count()).toBe(1);
      expect(await page.getByRole('main').count()).toBe(1);
      await screenshot(page, `shell-${heading.toLowerCase()}`);
    }
    expect(cp.errors).toEqual([]);
  });

  it('labels every form control on every page (names for screen readers)', async () => {
    for (const path of ['/workers', `/functions?fn=${encodeURIComponent(fn)}`, '/triggers', '/states', '/queues', '/config']) {
      await cp.open(path);
      await cp.page.getByRole('heading', { level: 1 }).waitFor();
      await cp.page.waitForTimeout(300);
      const unlabelled = await cp.page.evaluate(() =>
        [...document.querySelectorAll('input, select, textarea, button')]
          .filter((el: PageElement) => {
            const e = el;
            if (e.type === 'hidden' || e.closest('[aria-hidden="true"]')) return false;
            const named = (e.labels?.length ?? 0) > 0 || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.getAttribute('title');
            return !named && (el.tagName !== 'BUTTON' || (el.textContent ?? '').trim() === '');
          })
          .map((el: PageElement) => el.outerHTML.slice(0, 120)),
      );
      expect(unlabelled, path).toEqual([]);
    }
  });

  it('shows the engine as connected and lists the worker, which links to its functions', async () => {
    const { page } = cp;
    await cp.open('/workers');
    await expect.poll(() => page.getByTestId('engine-pill').textContent()).toContain('connected');
    const row = page.getByTestId('worker-row').filter({ hasText: workerName });
    await row.click();
    await expect.poll(() => page.url()).toContain('worker=');
    const detail = page.getByTestId('worker-detail');
    await detail.getByRole('link', { name: fn }).click();
    await expect.poll(() => page.url()).toContain(`fn=${encodeURIComponent(fn)}`);
    await screenshot(page, 'shell-worker-to-function');
  });

  it('opens the command palette with Ctrl+K and jumps to a function by keyboard alone', async () => {
    const { page } = cp;
    await cp.open('/workers');
    await page.getByRole('heading', { level: 1, name: 'Workers' }).waitFor();
    await page.keyboard.press('Control+k');
    const input = page.getByTestId('palette-input');
    await input.waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('palette-input');
    await page.keyboard.type(fn.split('::')[0] as string);
    await screenshot(page, 'shell-palette');
    await expect.poll(() => page.getByRole('option', { name: new RegExp(fn) }).count()).toBeGreaterThan(0);
    // The first match is highlighted; arrows move, Enter follows the deep link.
    while (!((await page.locator('[cmdk-item][data-selected="true"]').textContent()) ?? '').includes(fn)) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.url()).toContain(`/functions?fn=${encodeURIComponent(fn)}`);
    await expect.poll(() => page.getByTestId('function-detail').textContent()).toContain('Charges a card');
    await page.keyboard.press('Control+k');
    await input.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => input.isVisible()).toBe(false);
  });

  it('switches between the dark and light themes and keeps the choice', async () => {
    const { page } = cp;
    await cp.open('/config');
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    const before = await theme();
    await page.getByRole('button', { name: /Switch to (light|dark) theme/ }).click();
    expect(await theme()).not.toBe(before);
    await page.reload();
    expect(await theme()).not.toBe(before);
    await screenshot(page, 'shell-theme');
  });

  it('Config shows the version, the engine connectivity, every port and the modules', async () => {
    const { page } = cp;
    await cp.open('/config');
    await expect.poll(() => page.getByTestId('conn-bridge').textContent()).toContain('connected');
    const ports = (await page.getByTestId('config-ports').textContent()) ?? '';
    const stream = env.engine.listeners().find((l) => l.name === 'stream')?.url ?? '';
    for (const port of [new URL(stream).port, String(env.console.port)]) expect(ports).toContain(port);
    const modules = (await page.getByTestId('config-modules').textContent()) ?? '';
    for (const m of ['flint-http', 'flint-state', 'flint-queue', 'flint-cron']) expect(modules).toContain(m);
    await screenshot(page, 'config');
  });
});
