/**
 * `stream` triggers through both worker SDKs: the payload is the frame subscribers get, filters by stream,
 * group and item, conditions, every kind of change (create, update, delete, custom event), a failing
 * handler never failing the write, and configs that are refused (reported to the Flint SDK).
 */
import type { Engine } from '@flint/engine';
import { type Worker as FlintWorker, TriggerRegistrationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, findTrigger, startWorker } from '../support/harness.js';
import { startStreamEngine } from '../support/stream/helpers.js';
import { sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

// biome-ignore lint/suspicious/noExplicitAny: payloads are JSON
type Json = any;

describe.each(SDK_KINDS)('stream triggers with a %s worker', (kind: SdkKind) => {
  const setUp = async (config: Record<string, unknown>, condition?: (event: Json) => unknown) => {
    const engine = await startStreamEngine();
    const events: Json[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('app::on-change', (event: Json) => {
        events.push(event);
        return null;
      });
      if (condition) w.registerFunction('app::condition', condition);
      w.registerTrigger({ type: 'stream', function_id: 'app::on-change', config: condition ? { ...config, condition_function_id: 'app::condition' } : config });
    });
    await waitFor(() => findTrigger(engine, (t) => t.function_id === 'app::on-change'));
    return { engine, events };
  };
  const write = (engine: Engine, stream_name: string, group_id: string, item_id: string, data: unknown) =>
    engine.invoke('stream::set', { stream_name, group_id, item_id, data });

  it('gets the frame of every create, update, delete and custom event of its stream', async () => {
    const s = uid('feed');
    const { engine, events } = await setUp({ stream_name: s });
    await write(engine, s, 'g1', 'a', 1);
    await engine.invoke('stream::update', { stream_name: s, group_id: 'g1', item_id: 'a', ops: [{ type: 'increment', path: '', by: 1 }] });
    await engine.invoke('stream::send', { stream_name: s, group_id: 'g2', type: 'hello', data: 'x' });
    await engine.invoke('stream::delete', { stream_name: s, group_id: 'g1', item_id: 'a' });
    await engine.invoke('stream::delete', { stream_name: s, group_id: 'g1', item_id: 'a' }); // nothing deleted: no event
    await write(engine, uid('other'), 'g1', 'a', 1); // another stream
    await waitFor(() => events.length === 4);
    await sleep(100);
    expect(events).toHaveLength(4);
    expect(events[0]).toEqual({ type: 'stream', timestamp: expect.any(Number), streamName: s, groupId: 'g1', id: 'a', event: { type: 'create', data: 1 } });
    expect(events.slice(1).map((e) => [e.groupId, e.id, e.event])).toEqual([
      ['g1', 'a', { type: 'update', data: 2 }],
      ['g2', null, { type: 'event', event: { type: 'hello', data: 'x' } }],
      ['g1', 'a', { type: 'delete', data: 2 }],
    ]);
  });

  it('filters by group and item', async () => {
    const s = uid('filtered');
    const { engine, events } = await setUp({ stream_name: s, group_id: 'g', item_id: 'x' });
    await write(engine, s, 'other', 'x', 1);
    await write(engine, s, 'g', 'y', 2);
    await write(engine, s, 'g', 'x', 3);
    await waitFor(() => events.length === 1);
    await sleep(100);
    expect(events.map((e) => e.event.data)).toEqual([3]);
  });

  it('a condition answering false skips the handler; a handler that fails never fails the write', async () => {
    const s = uid('cond');
    const { engine, events } = await setUp({ stream_name: s }, (event: Json) => event.event.data > 10);
    await write(engine, s, 'g', 'a', 5);
    await write(engine, s, 'g', 'b', 50);
    await waitFor(() => events.length === 1);
    expect(events[0].event.data).toBe(50);

    const failing = uid('failing');
    await startWorker(kind, engine, (w) => {
      w.registerFunction('app::broken', () => {
        throw new Error('handler broke');
      });
      w.registerTrigger({ type: 'stream', function_id: 'app::broken', config: { stream_name: failing } });
    });
    await waitFor(() => findTrigger(engine, (t) => t.function_id === 'app::broken'));
    expect(await write(engine, failing, 'g', 'a', 1)).toEqual({ old_value: null, new_value: 1 });
  });
});

describe('stream trigger configs', () => {
  it('a config without stream_name, with a wrong type or an unknown key is refused and reported to the Flint SDK', async () => {
    const engine = await startStreamEngine();
    const w = await startWorker('flint', engine);
    const native = w.native as FlintWorker;
    native.registerFunction('noop::fn', () => null);
    const refused = async (type: string, config: unknown) => {
      const t = native.registerTrigger({ type, function_id: 'noop::fn', config });
      return t.ready.then(
        () => undefined,
        (err: unknown) => err,
      );
    };
    for (const config of [{}, { stream_name: '' }, { stream_name: 5 }, { stream_name: 's', group: 'typo' }, 'stream']) {
      const error = await refused('stream', config);
      expect(error, JSON.stringify(config)).toBeInstanceOf(TriggerRegistrationError);
      expect((error as Error).message).toMatch(/stream_name|group|config|expected/);
    }
    for (const config of [{ condition_function_id: 5 }, { scope: 'x' }]) {
      expect(await refused('stream:join', config), JSON.stringify(config)).toBeInstanceOf(TriggerRegistrationError);
    }
    expect(await findTrigger(engine, (t) => t.function_id === 'noop::fn')).toBeUndefined();
  });
});
