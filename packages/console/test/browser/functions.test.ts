/**
 * The Functions page in Chromium: invoking through the form generated from request_format, an error
 * code shown inline, the JSON editor's validation, the history, and the filter.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from '../support/console-env.js';

describe.skipIf(browserMissing !== undefined)('the Functions page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const prefix = uid('shop');
  const quote = `${prefix}::quote`;
  const broken = `${prefix}::broken`;
  const calls: Json[] = [];

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    await env.worker((w) => {
      w.registerFunction(
        quote,
        (input: Json) => {
          calls.push(input);
          return { total: input.quantity * 3, item: input.item, gift: input.gift };
        },
        {
          description: 'Prices an order line',
          request_format: {
            type: 'object',
            required: ['item', 'quantity'],
            properties: {
              item: { type: 'string', description: 'What to buy' },
              quantity: { type: 'integer', minimum: 1 },
              gift: { type: 'boolean' },
              size: { type: 'string', enum: ['S', 'M', 'L'] },
            },
          },
        },
      );
      w.registerFunction(broken, () => {
        throw new Error('the price list is missing');
      });
    });
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('invokes a function through the form generated from its request_format and shows the result inline', async () => {
    const { page } = cp;
    await cp.open(`/functions?fn=${encodeURIComponent(quote)}`);
    const form = page.getByTestId('schema-form');
    await form.waitFor();
    await form.getByLabel(/^item/).fill('tea');
    await form.getByLabel(/^quantity/).fill('4');
    await form.getByLabel(/^gift/).check();
    await form.getByLabel(/^size/).selectOption('M');
    await page.getByTestId('invoke-button').click();
    const result = page.getByTestId('invoke-result');
    await expect.poll(() => result.getAttribute('data-status')).toBe('ok');
    expect(await result.textContent()).toContain('"total": 12');
    expect(calls.at(-1)).toEqual({ item: 'tea', quantity: 4, gift: true, size: 'M' });
    await screenshot(page, 'functions-invoke-form');
    // The call is in this function's history.
    expect(await page.getByTestId('invoke-history').textContent()).toMatch(/ms/);
  });

  it('fills and submits the form by keyboard alone: Tab moves field to field, Ctrl+Enter invokes', async () => {
    const { page } = cp;
    await cp.open(`/functions?fn=${encodeURIComponent(quote)}`);
    const form = page.getByTestId('schema-form');
    await form.waitFor();
    await form.getByLabel(/^item/).focus();
    await page.keyboard.type('coffee');
    await page.keyboard.press('Tab');
    await page.keyboard.type('2');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    const before = calls.length;
    await page.keyboard.press('Control+Enter');
    await waitFor(() => calls.length > before, 5000, 'the keyboard invocation');
    expect(calls.at(-1)).toMatchObject({ item: 'coffee', quantity: 2, gift: true });
    await expect.poll(() => page.getByTestId('invoke-result').getAttribute('data-status')).toBe('ok');
  });

  it('shows a failing function’s error code and message inline', async () => {
    const { page } = cp;
    await cp.open(`/functions?fn=${encodeURIComponent(broken)}`);
    await page.getByTestId('function-detail').waitFor();
    await page.getByRole('tab', { name: 'JSON' }).click();
    await page.getByTestId('invoke-button').click();
    const result = page.getByTestId('invoke-result');
    await expect.poll(() => result.getAttribute('data-status')).toBe('error');
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('invocation_failed');
    expect(text).toContain('the price list is missing');
    await screenshot(page, 'functions-invoke-error');
  });

  it('refuses invalid JSON in the editor before calling', async () => {
    const { page } = cp;
    await cp.open(`/functions?fn=${encodeURIComponent(quote)}`);
    await page.getByTestId('function-detail').waitFor();
    await page.getByRole('tab', { name: 'JSON' }).click();
    const editor = page.getByRole('textbox', { name: /JSON/ });
    await editor.fill('{"item": "tea",');
    await expect.poll(() => editor.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText(/Invalid JSON/).count()).toBeGreaterThan(0);
    const before = calls.length;
    const invoke = page.getByTestId('invoke-button');
    if (await invoke.isEnabled()) await invoke.click();
    await page.waitForTimeout(200);
    expect(calls.length).toBe(before);
  });

  it('filters the list by name and keeps the filter in the URL', async () => {
    const { page } = cp;
    await cp.open('/functions');
    await page.getByTestId('function-row').first().waitFor();
    await page.getByLabel('Filter functions').fill('broken');
    await expect.poll(() => page.getByTestId('function-row').count()).toBe(1);
    expect(await page.getByTestId('function-row').textContent()).toContain(broken);
    await expect.poll(() => page.url()).toContain('q=broken');
    await screenshot(page, 'functions-filter');
  });
});
