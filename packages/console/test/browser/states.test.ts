/**
 * The States page in Chromium: real counts, an edit firing a `state` trigger registered by a worker,
 * a delete after confirmation firing state:deleted, adding a key in a new scope, and live refresh when
 * another client changes a key.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from '../support/console-env.js';

describe.skipIf(browserMissing !== undefined)('the States page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  const scope = uid('users');
  const events: Json[] = [];

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    const fn = `${uid('watch')}::users`;
    const worker = await env.worker((w) =>
      w.registerFunction(fn, (e: Json) => {
        events.push(e);
        return null;
      }),
    );
    await worker.registerTrigger({ type: 'state', function_id: fn, config: { scope } }).ready;
    for (const [key, value] of [
      ['ada', { name: 'Ada', admin: true }],
      ['bob', { name: 'Bob', admin: false }],
      ['carol', { name: 'Carol', admin: false }],
    ] as const) {
      await env.engine.invoke('state::set', { scope, key, value });
    }
    // The seeding's own state:created firings arrive asynchronously: let them land before the tests look.
    await waitFor(() => events.length >= 3, 5000, 'the seeding events');
    events.length = 0;
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('lists the scope with its real key count and its keys sorted', async () => {
    const { page } = cp;
    await cp.open(`/states?scope=${scope}`);
    await expect.poll(() => page.getByTestId('scope-row').filter({ hasText: scope }).textContent()).toContain('3');
    await expect.poll(() => page.getByTestId('state-row').count()).toBe(3);
    const keys = await page.getByTestId('state-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
    expect(keys).toEqual(['ada', 'bob', 'carol']);
    await screenshot(page, 'states-list');
  });

  it('edits a value with the JSON editor; the worker’s state trigger fires state:updated', async () => {
    const { page } = cp;
    await cp.open(`/states?scope=${scope}&key=bob`);
    await page.getByTestId('state-edit').click();
    const editor = page.getByRole('textbox', { name: /Value of bob/ });
    await editor.fill('{"name": "Bob",');
    await expect.poll(() => page.getByTestId('state-save').isDisabled()).toBe(true);
    await editor.fill('{"name": "Bob", "admin": true}');
    await page.getByTestId('state-save').click();
    const event = await waitFor(() => events.find((e) => e.key === 'bob'), 5000, 'the state trigger');
    expect(event).toMatchObject({ event_type: 'state:updated', scope, key: 'bob', old_value: { admin: false }, new_value: { name: 'Bob', admin: true } });
    await screenshot(page, 'states-edited');
  });

  it('deletes a key only after confirming; the trigger fires state:deleted', async () => {
    const { page } = cp;
    await cp.open(`/states?scope=${scope}&key=carol`);
    await page.getByTestId('state-delete').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await screenshot(page, 'states-delete-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForTimeout(200);
    expect(events.some((e) => e.key === 'carol')).toBe(false);
    await page.getByTestId('state-delete').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    const event = await waitFor(() => events.find((e) => e.key === 'carol'), 5000, 'state:deleted');
    expect(event).toMatchObject({ event_type: 'state:deleted', old_value: { name: 'Carol' } });
    await expect.poll(() => page.getByTestId('state-row').count()).toBe(2);
  });

  it('adds a key in a new scope from the Add dialog', async () => {
    const { page } = cp;
    const fresh = uid('settings');
    await cp.open(`/states?scope=${scope}`);
    await page.getByTestId('state-add').click();
    const dialog = page.getByTestId('state-add-dialog');
    await dialog.getByLabel('Scope').fill(fresh);
    await dialog.getByLabel('Key').fill('theme/main page');
    await dialog.getByRole('textbox', { name: /Value/ }).fill('"dark"');
    await page.getByTestId('state-add-save').click();
    await waitFor(async () => (await env.engine.invoke('state::get', { scope: fresh, key: 'theme/main page' })) === 'dark', 5000, 'the new key');
    await expect.poll(() => page.getByTestId('scope-row').filter({ hasText: fresh }).count()).toBe(1);
  });

  it('refreshes by itself when another client changes a key', async () => {
    const { page } = cp;
    await cp.open(`/states?scope=${scope}`);
    await expect.poll(() => page.getByTestId('state-row').count()).toBe(2);
    await env.engine.invoke('state::set', { scope, key: 'dave', value: { name: 'Dave' } });
    await expect.poll(() => page.getByTestId('state-row').count(), { timeout: 5000 }).toBe(3);
    await screenshot(page, 'states-live');
    expect(cp.errors).toEqual([]);
  });
});
