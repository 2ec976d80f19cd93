/**
 * The engine log has one info line when a worker announces itself and one when it disconnects, each
 * with the worker's name, id and function count; the disconnect line also has the close code and
 * reason. Anonymous connections (the CLI) are not logged at info.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { LEVEL, type LogRecord, captureLog } from '../support/log-capture.js';
import { RawClient } from '../support/raw-client.js';
import { uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const workerLines = (records: LogRecord[]) => records.filter((r) => r.level === LEVEL.info && /^worker .* (connected|disconnected) /.test(r.msg ?? ''));

describe('worker connect and disconnect log lines', () => {
  it('name the worker, its id and function count, and on disconnect the close code and reason', async () => {
    const log = captureLog('info');
    const engine = await startTestEngine({ log: { level: 'info' } }, { logger: log.logger });
    const name = uid('logged');
    const worker = await startWorker(
      'flint',
      engine,
      (w) => {
        w.registerFunction('log::a', () => null);
        w.registerFunction('log::b', () => null);
      },
      { name },
    );
    const connected = await waitFor(() => workerLines(log.records).find((r) => r.msg.includes(' connected ')), 2000, 'the connect line');
    const id = connected.worker_id as string;
    expect(connected.msg).toBe(`worker ${name} connected (id ${id}, node SDK 0.1.0, 2 functions)`);
    expect(connected).toMatchObject({ worker_name: name, function_count: 2 });

    await worker.shutdown();
    const disconnected = await waitFor(() => workerLines(log.records).find((r) => r.msg.includes(' disconnected ')), 2000, 'the disconnect line');
    expect(disconnected.msg).toMatch(new RegExp(`^worker ${name} disconnected \\(id ${id}, 2 functions, close 1000( ".*")?\\)$`));
    expect(disconnected).toMatchObject({ worker_id: id, worker_name: name, function_count: 2, code: 1000 });
  });

  it('gives a close code and reason the worker sent, and says nothing at info about anonymous connections', async () => {
    const log = captureLog('info');
    const engine = await startTestEngine({ log: { level: 'info' } }, { logger: log.logger });
    const anonymous = await RawClient.connect(engine.bridgeUrl);
    await anonymous.roundTrip();
    await anonymous.close();

    const raw = await RawClient.connect(engine.bridgeUrl);
    const id = await raw.registered();
    await raw.serve('raw::one', () => null);
    raw.send({ type: 'invokefunction', function_id: 'engine::workers::register', data: { name: 'raw-worker', runtime: 'test' }, action: { type: 'void' } });
    await waitFor(() => workerLines(log.records).length === 1, 2000, 'the connect line');
    expect(workerLines(log.records)[0]?.msg).toBe(`worker raw-worker connected (id ${id}, test, 1 function)`);
    raw.ws.close(4000, 'going away');
    await waitFor(() => workerLines(log.records).length === 2, 2000, 'the disconnect line');
    expect(workerLines(log.records)[1]?.msg).toBe(`worker raw-worker disconnected (id ${id}, 1 function, close 4000 "going away")`);
    expect(workerLines(log.records).map((r) => r.worker_id)).toEqual([id, id]);
  });
});
