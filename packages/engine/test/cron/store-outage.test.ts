/**
 * flint-cron while its store goes down: 30 one-second jobs on a redis store of a redis-server this test
 * starts (a crash is SIGKILL). While it is gone every slot's claim fails: the slots are not fired, the
 * engine keeps running, and the log says so in at most ten lines a second plus one line counting the
 * rest per job. Once Redis is back every job fires again. Skipped with a printed reason where there is
 * no `redis-server` program (a failure with FLINT_REQUIRE_SERVICES=1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { listFunctions, startTestEngine, startWorker } from '../support/harness.js';
import { captureLog } from '../support/log-capture.js';
import { SpareRedisServer } from '../support/services/redis-server.js';
import { gateService, programAvailable } from '../support/services/services.js';
import { uid, waitFor } from '../support/util.js';

const runOutage = gateService('cron store outage tests', programAvailable('redis-server'));
const JOBS = 30;

describe.skipIf(!runOutage)('flint-cron while its redis store is down', () => {
  let server: SpareRedisServer;

  beforeAll(async () => {
    server = await SpareRedisServer.start();
  });

  afterAll(async () => {
    await cleanup();
    await server.stop();
  });

  it('skips the slots it cannot claim, logs them rate-limited, and fires again once Redis is back', async () => {
    const log = captureLog('warn');
    const store = { name: 'redis', config: { redis_url: server.url, key_prefix: `${uid('cron-outage')}:` } };
    const engine = await startTestEngine({ modules: [{ name: 'flint-cron', config: { store } }] }, { logger: log.logger });
    const fired = new Map<string, number>();
    const ids = Array.from({ length: JOBS }, (_, i) => `cron::outage::f${i}`);
    await startWorker('flint', engine, (w) => {
      for (const id of ids) {
        w.registerFunction(id, () => {
          fired.set(id, (fired.get(id) ?? 0) + 1);
          return null;
        });
        w.registerTrigger({ type: 'cron', function_id: id, config: { expression: '* * * * * *' } });
      }
    });
    await waitFor(() => fired.size === JOBS, 4000, 'every job firing once');

    await server.kill();
    const notFired = () => log.records.filter((r) => /^cron job \S+: slot \S+ not fired: /.test(String(r.msg)));
    const summaries = () => log.records.filter((r) => /^\d+ more cron slots? not fired in the last second \(/.test(String(r.msg)));
    await waitFor(() => summaries().length >= 2, 5000, 'two seconds of summaries');
    const windows = summaries().length + 1;
    // At most ten lines in full per window; each window that counted wrote one summary naming the jobs.
    expect(notFired().length).toBeGreaterThanOrEqual(10);
    expect(notFired().length).toBeLessThanOrEqual(10 * windows);
    expect(notFired()[0]).toMatchObject({ level: 40, module: 'flint-cron', code: 'store_unavailable', function_id: expect.stringMatching(/^cron::outage::/) });
    const summary = summaries()[0];
    expect(summary).toMatchObject({ level: 40, module: 'flint-cron', count: expect.any(Number) });
    expect(Object.values(summary?.jobs ?? {}).reduce((n: number, c) => n + Number(c), 0)).toBeLessThanOrEqual(Number(summary?.count));
    // The engine still answers, its worker still connected.
    expect((await listFunctions(engine)).map((f) => f.function_id)).toEqual(expect.arrayContaining(ids));

    const before = new Map(fired);
    await server.restart();
    await waitFor(() => ids.every((id) => (fired.get(id) ?? 0) > (before.get(id) ?? 0)), 8000, 'every job firing again');
  });
});
