/**
 * The pretty log cannot be forged: control characters in logged strings (a worker's engine::log::*
 * message and data, a handler's error message the HTTP module logs) are written as visible escapes,
 * so every line of the output is one entry that starts with its time and level, and no string can
 * start a line of its own, move the cursor or change colours.
 */
import { PassThrough } from 'node:stream';
import { createLogger } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { fetchWithin, serveRoute } from '../support/http/helpers.js';
import { waitFor } from '../support/util.js';

afterEach(cleanup);

const FORGED = '\n[12:00:00.000] ERROR: forged entry';
const NASTY = `line one${FORGED}\r[12:00:00.000] INFO: carriage return\x1b[31m red \x1b[0m\u009b31m csi\u2028sep\x07bell\ttab\x7fdel`;
const ENTRY = /^\[\d\d:\d\d:\d\d\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): /;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what must not reach the output
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

describe('pretty log output', () => {
  it('escapes control characters in messages and field values: one line per entry, no forged lines', async () => {
    const destination = new PassThrough();
    let output = '';
    destination.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const logger = createLogger({ format: 'pretty', level: 'info', destination });
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0 } }] }, { logger });
    const worker = await startWorker('flint', engine, (w) => {
      serveRoute(w, 'evil::throws', { method: 'GET', path: '/evil' }, () => {
        throw new Error(`handler failed${FORGED}`);
      });
    });
    await worker.trigger({ function_id: 'engine::log::error', payload: { message: NASTY, data: { note: NASTY, [`key${FORGED}`]: 1 } } });
    const base = engine.listeners().find((l) => l.name === 'http')?.url as string;
    expect((await fetchWithin(`${base}/evil`)).status).toBe(500);
    await waitFor(() => output.includes('handler failed') && output.includes('line one'), 3000, 'both entries in the output');

    const lines = output.split('\n').slice(0, -1);
    for (const line of lines) {
      expect(line, 'every line is an entry of its own').toMatch(ENTRY);
      expect(CONTROL.test(line), `a control character in ${JSON.stringify(line)}`).toBe(false);
    }
    expect(lines.filter((l) => l.includes('forged entry')).every((l) => !l.startsWith('[12:00:00.000]'))).toBe(true);
    // The worker's line: message and data escaped, readable.
    const workerLine = lines.find((l) => l.includes('line one')) as string;
    expect(workerLine).toMatch(
      /^\[[\d:.]+\] ERROR: line one\\n\[12:00:00\.000\] ERROR: forged entry\\r\[12:00:00\.000\] INFO: carriage return\\u001b\[31m red /,
    );
    expect(workerLine).toContain('\\u009b31m csi\\u2028sep\\u0007bell\\ttab\\u007fdel');
    expect(workerLine).toContain('"note":"line one\\n[12:00:00.000] ERROR: forged entry\\r');
    expect(workerLine).toContain('"key\\n[12:00:00.000] ERROR: forged entry":1');
    // The HTTP module's error line with the handler's message.
    expect(lines.find((l) => l.includes('handler failed'))).toMatch(/^\[[\d:.]+\] ERROR: .*handler failed\\n\[12:00:00\.000\] ERROR: forged entry/);
  });
});
