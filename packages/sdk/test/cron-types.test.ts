/**
 * The SDK's cron types against a real engine with flint-cron: a trigger registered with a
 * `CronTriggerConfig` fires its function with a `CronEvent`, and a config the type refuses at compile
 * time (checked by `npm run typecheck:tests` through the @ts-expect-error lines) is refused by the engine too.
 */
import { type CronEvent, type CronTriggerConfig, TriggerRegistrationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, rejection, startTestEngine, startWorker, waitFor } from './support.js';

afterEach(cleanup);

describe('cron trigger types', () => {
  it('a trigger with a CronTriggerConfig calls its function with a CronEvent', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-cron' }] });
    const worker = startWorker(engine.listeners()[0]?.url as string);
    const events: CronEvent[] = [];
    worker.registerFunction('reports::tick', (event: CronEvent) => {
      events.push(event);
      return null;
    });
    const config: CronTriggerConfig = { expression: '* * * * * *', timezone: 'Asia/Tokyo', overlap: 'allow', jitter_ms: 0 };
    const trigger = worker.registerTrigger({ type: 'cron', function_id: 'reports::tick', config });
    await trigger.ready;
    const [event] = await waitFor(() => (events.length > 0 ? events : undefined), 5000, 'a firing');
    expect(event?.trigger).toEqual({ id: trigger.id, type: 'cron', expression: '* * * * * *', timezone: 'Asia/Tokyo' });
    expect(event?.job_id).toMatch(/^reports::tick#[0-9a-f]{12}$/);
    expect(event?.scheduled_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000\+09:00$/);
    expect(event?.actual_time).toMatch(/\+09:00$/);
    expect(event?.manual).toBe(false);
  });

  it('a config the type refuses is refused by the engine, naming the key', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-cron' }] });
    const worker = startWorker(engine.listeners()[0]?.url as string);
    worker.registerFunction('reports::tick', () => null);
    // @ts-expect-error a misspelt key is a compile error: the config of a 'cron' trigger is a CronTriggerConfig
    const misspelt = worker.registerTrigger({ type: 'cron', function_id: 'reports::tick', config: { expression: '@hourly', timzone: 'UTC' } });
    const error = await rejection<TriggerRegistrationError>(misspelt.ready);
    expect(error).toBeInstanceOf(TriggerRegistrationError);
    expect(error.code).toBe('trigger_registration_failed');
    expect(error.message).toMatch(/unknown key "timzone"/);
    // @ts-expect-error overlap is 'skip' or 'allow'
    const badOverlap = worker.registerTrigger({ type: 'cron', function_id: 'reports::tick', config: { expression: '@hourly', overlap: 'never' } });
    expect((await rejection<TriggerRegistrationError>(badOverlap.ready)).message).toMatch(/overlap/);
  });
});
