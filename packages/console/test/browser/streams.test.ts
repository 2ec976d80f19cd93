/**
 * The Streams page in Chromium: a stream a worker wrote to is listed with its groups and type; the
 * inspector of a group (its own WebSocket through the console's proxy) sends a join, counts and lists
 * the frames a worker's writes send (inbound goes up), filters them by direction, holds them while
 * paused and clears; the engine's counters see the page's client; when its socket drops it reconnects
 * and joins again.
 */
import type { Browser, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, browserMissing, launchBrowser, openConsolePage, screenshot } from '../support/browser.js';
import { type ConsoleEnv, sleep, startConsoleEnv, uid } from '../support/console-env.js';

describe.skipIf(browserMissing !== undefined)('the Streams page (Chromium)', () => {
  let env: ConsoleEnv;
  let browser: Browser;
  let cp: ConsolePage;
  let worker: Awaited<ReturnType<ConsoleEnv['worker']>>;
  const stream = uid('chat');

  const counter = async (id: string) => Number(((await cp.page.getByTestId(`${id}-value`).textContent()) ?? '').replace(/[^\d]/g, ''));
  const frames = () => cp.page.getByTestId('stream-frame');

  beforeAll(async () => {
    [env, browser] = await Promise.all([startConsoleEnv(), launchBrowser()]);
    worker = await env.worker();
    await worker.stream.set(stream, 'room-1', 'm1', { text: 'first' });
    await worker.stream.set(stream, 'room-2', 'm1', { text: 'elsewhere' });
    cp = await openConsolePage(browser, env.url);
  });
  afterAll(async () => {
    await cp?.close();
    await browser?.close();
    await env?.close();
  });

  it('lists a stream a worker wrote to, with its groups and its type', async () => {
    const { page } = cp;
    await cp.open('/streams');
    const row = page.getByTestId('stream-row').filter({ hasText: stream });
    await row.waitFor({ timeout: 5000 });
    expect(await row.getByTestId('stream-type').textContent()).toBe('user');
    expect(await row.getByTestId('group-chip').allTextContents()).toEqual(['room-1', 'room-2']);
    await screenshot(page, 'streams-list');
  });

  it('inspects a group: the join goes out, the sync and a worker write come in and are counted', async () => {
    const { page } = cp;
    await cp.open('/streams');
    await page.getByTestId('stream-row').filter({ hasText: stream }).getByTestId('group-chip').filter({ hasText: 'room-1' }).click();
    await expect.poll(() => page.url()).toContain('group=room-1');
    expect(new URL(page.url()).searchParams.get('stream')).toBe(stream);
    await expect.poll(() => page.getByTestId('inspector-status').textContent(), { timeout: 5000 }).toBe('Connected');
    await expect.poll(() => counter('inspector-outbound')).toBe(1);
    await expect.poll(() => counter('inspector-inbound')).toBe(1);
    expect(await frames().evaluateAll((els) => els.map((e) => `${e.getAttribute('data-direction')}:${e.getAttribute('data-kind')}`))).toEqual([
      'in:sync',
      'out:join',
    ]);

    await worker.stream.set(stream, 'room-1', 'm2', { text: 'hello from the worker' });
    await expect.poll(() => counter('inspector-inbound'), { timeout: 5000 }).toBe(2);
    await expect.poll(() => counter('inspector-total')).toBe(3);
    const created = frames().first();
    expect(await created.getAttribute('data-kind')).toBe('create');
    expect(await created.textContent()).toContain('m2');
    await created.getByRole('button').click();
    await expect.poll(() => created.textContent()).toContain('hello from the worker');

    // The same through the stream::set function: an update of m1.
    await worker.trigger({ function_id: 'stream::set', payload: { stream_name: stream, group_id: 'room-1', item_id: 'm1', data: { text: 'edited' } } });
    await expect.poll(() => counter('inspector-inbound'), { timeout: 5000 }).toBe(3);
    expect(await frames().first().getAttribute('data-kind')).toBe('update');
    // Writes to another group are not sent to this subscription.
    await worker.stream.set(stream, 'room-2', 'm9', { text: 'not here' });
    await sleep(300);
    expect(await counter('inspector-inbound')).toBe(3);
    expect(Number(await counter('inspector-buffered'))).toBeGreaterThan(0);

    // The engine's counters (refreshed every 2 s) see this page's client and its subscription.
    await expect.poll(() => counter('engine-clients'), { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    await expect.poll(() => counter('engine-subscriptions'), { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    await expect.poll(() => counter('engine-frames-out'), { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    await screenshot(page, 'streams-inspector');
  });

  it('filters frames by direction (in the URL), holds them while paused, and clears', async () => {
    const { page } = cp;
    await cp.open(`/streams?stream=${encodeURIComponent(stream)}&group=room-1`);
    await expect.poll(() => page.getByTestId('inspector-status').textContent(), { timeout: 5000 }).toBe('Connected');
    await expect.poll(() => frames().count()).toBe(2);

    await page.getByTestId('dir-out').click();
    await expect.poll(() => page.url()).toContain('dir=out');
    await expect.poll(() => frames().evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')))).toEqual(['join']);
    await page.getByTestId('dir-in').click();
    await expect.poll(() => frames().evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')))).toEqual(['sync']);
    await page.getByTestId('dir-both').click();
    await expect.poll(() => frames().count()).toBe(2);

    await page.getByTestId('inspector-pause').click();
    await worker.stream.send(stream, 'room-1', 'typing', { who: 'ada' });
    await expect.poll(() => counter('inspector-inbound'), { timeout: 5000 }).toBe(2);
    expect(await frames().count()).toBe(2);
    expect(await page.getByTestId('inspector-pause').textContent()).toContain('1 waiting');
    await page.getByTestId('inspector-pause').click();
    await expect.poll(() => frames().count()).toBe(3);
    expect(await frames().first().getAttribute('data-kind')).toBe('event');
    expect(await frames().first().textContent()).toContain('typing');

    await page.getByTestId('inspector-clear').click();
    await expect.poll(() => frames().count()).toBe(0);
    // The counters go on after Clear.
    expect(await counter('inspector-total')).toBe(3);
    await worker.stream.delete(stream, 'room-1', 'm2');
    await expect.poll(() => frames().count(), { timeout: 5000 }).toBe(1);
    expect(await frames().first().getAttribute('data-kind')).toBe('delete');
    await screenshot(page, 'streams-inspector-filtered');
    expect(cp.errors).toEqual([]);
  });

  it('reconnects when its socket drops and joins again', async () => {
    const other = await openConsolePage(browser, env.url);
    const sockets: WebSocketRoute[] = [];
    // Every inspector socket goes through this route (to the console, unchanged) so the test can drop it.
    await other.page.routeWebSocket(/\/_console\/streams/, (ws) => {
      sockets.push(ws);
      ws.connectToServer();
    });
    try {
      const { page } = other;
      const count = async (id: string) => Number(((await page.getByTestId(`${id}-value`).textContent()) ?? '').replace(/[^\d]/g, ''));
      await other.open(`/streams?stream=${encodeURIComponent(stream)}&group=room-1`);
      await expect.poll(() => page.getByTestId('inspector-status').textContent(), { timeout: 5000 }).toBe('Connected');
      await expect.poll(() => count('inspector-inbound')).toBeGreaterThanOrEqual(1);
      // The socket the inspector uses now (the page may have opened one before it settled).
      const opened = sockets.length;
      const outbound = await count('inspector-outbound');
      const inbound = await count('inspector-inbound');

      await sockets[opened - 1]?.close({ code: 4000, reason: 'dropped by the test' });
      await expect.poll(() => sockets.length, { timeout: 5000 }).toBeGreaterThan(opened);
      await expect.poll(() => page.getByTestId('inspector-status').textContent(), { timeout: 5000 }).toBe('Connected');
      // A second join, answered by a fresh sync.
      await expect.poll(() => count('inspector-outbound')).toBe(outbound + 1);
      await expect.poll(() => count('inspector-inbound')).toBe(inbound + 1);
      await worker.stream.set(stream, 'room-1', 'm3', { text: 'after the drop' });
      await expect.poll(() => count('inspector-inbound'), { timeout: 5000 }).toBe(inbound + 2);
      expect(await page.getByTestId('stream-frame').first().textContent()).toContain('m3');
      // Playwright's WebSocket routing shim (not the page) logs this when the server side still delivers a
      // frame to the socket the test just closed; anything else the page logs is a defect.
      expect(other.errors.filter((e) => !e.includes('WebSocket is already in CLOSING or CLOSED state'))).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
