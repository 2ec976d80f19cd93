/**
 * The Queues page in Chromium: a topic's stats, its dead letters with error and attempts, redrive one
 * and redrive all once the subscriber works, discard after confirmation.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from '../support/console-env.js';

describe.skipIf(browserMissing !== undefined)('the Queues page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const topic = uid('invoices');
  let working = false;
  const handled: Json[] = [];

  const deadCount = async () => ((await env.api('GET', `/_console/queues/${topic}/dead`)).body.messages as Json[]).length;

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    const fn = `${uid('billing')}::send`;
    const worker = await env.worker((w) =>
      w.registerFunction(fn, (data: Json) => {
        if (!working) throw new Error(`mail server down for ${data.invoice}`);
        handled.push(data);
        return null;
      }),
    );
    await worker.registerTrigger({ type: 'durable:subscriber', function_id: fn, config: { topic, queue_config: { max_retries: 1, backoff_ms: 10 } } }).ready;
    for (const invoice of [1, 2, 3]) await env.engine.invoke('flint::durable::publish', { topic, data: { invoice } });
    await waitFor(async () => (await deadCount()) === 3, 8000, 'three dead letters');
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('shows the topic with its dead letters, their error and attempts', async () => {
    const { page } = cp;
    await cp.open('/queues');
    const row = page.getByTestId('queue-row').filter({ hasText: topic });
    await expect.poll(() => row.textContent()).toContain('3');
    await row.click();
    await page.getByTestId('dead-letters-tab').click();
    await expect.poll(() => page.getByTestId('dead-letter-row').count()).toBe(3);
    const text = (await page.getByTestId('dead-letter-row').first().textContent()) ?? '';
    expect(text).toContain('mail server down');
    await screenshot(page, 'queues-dead-letters');
  });

  it('redrives one dead letter, then discards one after confirming, then redrives the rest', async () => {
    const { page } = cp;
    working = true;
    await cp.open(`/queues?queue=${topic}&tab=dead`);
    await expect.poll(() => page.getByTestId('dead-letter-row').count()).toBe(3);
    await page.getByTestId('redrive-button').first().click();
    await waitFor(() => handled.length === 1, 5000, 'the redriven message to be handled');
    await expect.poll(() => page.getByTestId('dead-letter-row').count(), { timeout: 5000 }).toBe(2);

    await page.getByTestId('discard-button').first().click();
    await page.getByRole('dialog').getByRole('button', { name: 'Discard' }).click();
    await expect.poll(() => deadCount(), { timeout: 5000 }).toBe(1);

    await page.getByTestId('redrive-all').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Redrive all' }).click();
    await waitFor(() => handled.length === 2, 5000, 'the last message to be handled');
    await expect.poll(() => page.getByTestId('action-result').textContent()).toMatch(/1 message/);
    await expect.poll(() => page.getByTestId('dead-letter-row').count(), { timeout: 5000 }).toBe(0);
    await screenshot(page, 'queues-redriven');
    expect(cp.errors).toEqual([]);
  });
});
