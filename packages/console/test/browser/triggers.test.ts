/**
 * The Triggers page in Chromium: the HTTP request builder calling a real route, cron Trigger Now,
 * Publish on a queue subscriber, and Emit on a worker-defined event trigger that really delivers.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from '../support/console-env.js';

describe.skipIf(browserMissing !== undefined)('the Triggers page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const p = uid('ops');
  const route = `${p}::route`;
  const tick = `${p}::tick`;
  const audit = `${p}::audit`;
  const hook = `${p}::hook`;
  const topic = uid('orders');
  const eventType = uid('webhook');
  const seen: Record<string, Json[]> = { route: [], tick: [], audit: [], hook: [] };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    const worker = await env.worker((w) => {
      w.registerFunction(route, (req: Json) => {
        seen.route?.push(req);
        return { status_code: 201, headers: { 'x-order': req.path_params.id }, body: { id: req.path_params.id, lang: req.query_params.lang, body: req.body } };
      });
      w.registerFunction(tick, (event: Json) => {
        seen.tick?.push(event);
        return { ticked: true };
      });
      w.registerFunction(audit, (data: Json) => {
        seen.audit?.push(data);
        return null;
      });
      w.registerFunction(hook, (data: Json) => {
        seen.hook?.push(data);
        return { received: data };
      });
      w.registerTriggerType({ id: eventType, description: 'A test event source' }, { registerTrigger: async () => {}, unregisterTrigger: async () => {} });
    });
    const register = async (key: string, type: string, function_id: string, config: Json) => {
      const t = worker.registerTrigger({ type, function_id, config });
      await t.ready;
      ids[key] = t.id;
    };
    await register('route', 'http', route, { api_path: `${p}/orders/:id`, http_method: 'POST' });
    await register('tick', 'cron', tick, { expression: '0 0 1 1 *' });
    await register('audit', 'durable:subscriber', audit, { topic });
    await register('hook', eventType, hook, {});
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  const select = async (key: string) => {
    await cp.open(`/triggers?trigger=${ids[key]}`);
    await cp.page.getByTestId('trigger-detail').waitFor();
    return cp.page.getByTestId('trigger-detail');
  };

  it('groups the triggers by type', async () => {
    await cp.open('/triggers');
    await cp.page.getByTestId('trigger-row').first().waitFor();
    const groups = await cp.page.getByTestId('trigger-group').allTextContents();
    const order = ['HTTP', 'Queue', 'Cron', eventType].map((label) => groups.findIndex((g) => g.includes(label)));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    await screenshot(cp.page, 'triggers-grouped');
  });

  it('sends a request from the HTTP builder to the real route and shows status, headers and body', async () => {
    const detail = await select('route');
    await detail.getByLabel(/:id/).fill('A 17');
    await detail.getByRole('button', { name: /add query/i }).click();
    const keys = detail.getByRole('textbox', { name: /name/i });
    await keys.last().fill('lang');
    await detail.getByRole('textbox', { name: /value/i }).last().fill('fr');
    await detail.getByRole('textbox', { name: /body/i }).fill('{"qty": 2}');
    await cp.page.getByTestId('http-send').click();
    await expect.poll(() => cp.page.getByTestId('http-response-status').textContent()).toContain('201');
    const text = (await detail.textContent()) ?? '';
    expect(text).toContain('x-order');
    expect(text).toContain('"lang": "fr"');
    expect(seen.route?.at(-1)).toMatchObject({ path_params: { id: 'A 17' }, query_params: { lang: 'fr' }, body: { qty: 2 } });
    await screenshot(cp.page, 'triggers-http-builder');
  });

  it('runs a cron trigger now and shows its function’s result', async () => {
    const detail = await select('tick');
    await cp.page.getByTestId('cron-trigger-now').click();
    await expect.poll(() => detail.getByTestId('action-result').textContent()).toContain('ticked');
    expect(seen.tick?.at(-1)).toMatchObject({ manual: true });
    await screenshot(cp.page, 'triggers-cron-now');
  });

  it('publishes to a queue subscriber’s topic', async () => {
    await select('audit');
    await cp.page.getByRole('textbox', { name: /Message data/ }).fill('{"order": 42}');
    await cp.page.getByTestId('publish-button').click();
    await waitFor(() => seen.audit?.some((d) => d.order === 42), 5000, 'the subscriber to get the message');
    await screenshot(cp.page, 'triggers-publish');
  });

  it('emits a payload to a worker-defined event trigger, which its function receives', async () => {
    const detail = await select('hook');
    await detail.getByRole('textbox', { name: /Payload/ }).fill('{"event": "paid", "amount": 9}');
    await cp.page.getByTestId('emit-button').click();
    await expect.poll(() => detail.getByTestId('action-result').textContent()).toContain('paid');
    expect(seen.hook?.at(-1)).toEqual({ event: 'paid', amount: 9 });
    await screenshot(cp.page, 'triggers-emit');
    expect(cp.errors).toEqual([]);
  });
});
