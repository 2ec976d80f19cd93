/**
 * The state `bridge` adapter: an edge engine keeps no state of its own and forwards every state call to
 * a central engine over its bridge; its own state triggers still fire.
 */
import { type Engine, startEngine } from '@flint/engine';
import { registerWorker } from '@flint/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { startTestEngine } from '../support/harness.js';
import { freePort, rejectsWith, waitFor } from '../support/util.js';

afterEach(cleanup);

const bridgeTo = (central: Engine, extra: Record<string, unknown> = {}) => ({
  name: 'flint-state',
  config: { adapter: { name: 'bridge', config: { bridge_url: central.bridgeUrl, timeout_ms: 2000, connect_timeout_ms: 1000, ...extra } } },
});

async function centralOn(port = 0): Promise<Engine> {
  const engine = await startEngine({ config: { bridge: { port }, log: { level: 'silent' }, modules: [{ name: 'flint-state' }] } });
  track(() => engine.stop());
  return engine;
}

describe('state bridge adapter', () => {
  test('every state call through the edge engine is served by the central one; the edge fires its own triggers', async () => {
    const central = await centralOn();
    const edge = await startTestEngine({ modules: [bridgeTo(central)] });
    const events: unknown[] = [];
    const w = registerWorker(edge.bridgeUrl, { log: { warn() {}, error() {}, debug() {} } });
    track(() => w.shutdown());
    w.registerFunction('edge::on-change', async (event: { event_type: string; key: string }) => {
      events.push([event.event_type, event.key]);
    });
    await w.registerTrigger({ type: 'state', function_id: 'edge::on-change', config: { scope: 'carts' } }).ready;

    expect(await edge.invoke('state::set', { scope: 'carts', key: 'c1', value: { items: 1 } })).toEqual({ old_value: null, new_value: { items: 1 } });
    expect(await central.invoke('state::get', { scope: 'carts', key: 'c1' })).toEqual({ items: 1 });
    const updated = await edge.invoke('state::update', { scope: 'carts', key: 'c1', ops: [{ type: 'increment', path: 'items', by: 2 }] });
    expect(updated).toEqual({ old_value: { items: 1 }, new_value: { items: 3 } });
    await central.invoke('state::set', { scope: 'carts', key: 'c2', value: 'x' });
    expect(await edge.invoke('state::get', { scope: 'carts', key: 'c2' })).toBe('x');
    expect(((await edge.invoke('state::list', { scope: 'carts' })) as unknown[]).length).toBe(2);
    expect(await edge.invoke('state::list_groups', { counts: true })).toEqual({ groups: ['carts'], counts: { carts: 2 } });
    expect(await edge.invoke('state::list_entries', { scope: 'carts' })).toEqual({
      entries: [
        { key: 'c1', value: { items: 3 } },
        { key: 'c2', value: 'x' },
      ],
      total: 2,
    });
    expect(await edge.invoke('state::delete', { scope: 'carts', key: 'c1' })).toEqual({ old_value: { items: 3 } });
    await waitFor(() => events.length === 3, 2000, 'three state events on the edge');
    expect(events).toEqual([
      ['state:created', 'c1'],
      ['state:updated', 'c1'],
      ['state:deleted', 'c1'],
    ]);
    // A bad call is refused with the code the central engine (or the edge's own check) gives.
    await rejectsWith(edge.invoke('state::update', { scope: 'carts', key: 'c2', ops: [{ type: 'teleport' }] }), 'invalid_payload');
  });

  test('an unreachable central engine stops the edge from starting, naming it', async () => {
    const port = await freePort();
    const err = await startEngine({
      config: {
        bridge: { port: 0 },
        log: { level: 'silent' },
        modules: [{ name: 'flint-state', config: { adapter: { name: 'bridge', config: { bridge_url: `ws://127.0.0.1:${port}`, connect_timeout_ms: 500 } } } }],
      },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain(`the state bridge: the engine at ws://127.0.0.1:${port} cannot be reached`);
  });

  test('while the central engine is down calls fail with store_unavailable, and they resume when it is back', async () => {
    const port = await freePort();
    let central = await centralOn(port);
    const edge = await startTestEngine({ modules: [bridgeTo(central)] });
    await edge.invoke('state::set', { scope: 's', key: 'k', value: 1 });
    await central.stop();
    const down = await rejectsWith(edge.invoke('state::get', { scope: 's', key: 'k' }), 'store_unavailable');
    expect(down.message).toContain(`ws://127.0.0.1:${port}`);
    central = await centralOn(port);
    await waitFor(
      async () =>
        await edge.invoke('state::set', { scope: 's', key: 'k', value: 2 }).then(
          () => true,
          () => false,
        ),
      5000,
      'the edge to reach the central engine again',
    );
    expect(await central.invoke('state::get', { scope: 's', key: 'k' })).toBe(2);
  });

  test('flint-cron refuses a bridge store', async () => {
    const central = await centralOn();
    const err = await startEngine({
      config: {
        bridge: { port: 0 },
        log: { level: 'silent' },
        modules: [{ name: 'flint-cron', config: { store: { name: 'bridge', config: { bridge_url: central.bridgeUrl } } } }],
      },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain("flint-cron's store cannot be a bridge");
  });
});
