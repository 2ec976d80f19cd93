// Runs autocannon (its Node API, in this process) and records every response's latency itself:
// autocannon's own histogram keeps whole milliseconds, too coarse for sub-millisecond p50s.
// Every client socket gets setNoDelay(true) (autocannon's client uses a bare net.connect), so the
// load generator adds no Nagle delay of its own.
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

const require = createRequire(import.meta.url);
const Client = require('autocannon/lib/httpClient.js');
if (!Client.prototype.__benchNoDelay) {
  const connect = Client.prototype._connect;
  Client.prototype._connect = function connectNoDelay(...args) {
    const result = connect.apply(this, args);
    this.conn?.setNoDelay?.(true);
    return result;
  };
  Client.prototype.__benchNoDelay = true;
}

/**
 * One autocannon run against `url` for `seconds` with `connections` keep-alive connections (one
 * request in flight on each). `requests`: optional autocannon requests array (each connection cycles
 * through it). Resolves with { ok, latenciesMs (Float64Array), seconds, non2xx, errors, timeouts }.
 * `seconds` is timed here from autocannon's 'start' event (its clients are built by then) to the end:
 * autocannon's own `duration` also counts building the clients, which with a long `requests` array
 * (each client pre-builds every request) takes a good part of a second. Only requests issued after
 * 'start' are counted (`ok`) and timed.
 */
export function load({ url, connections, seconds, requests, overallRate }) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    let ok = 0;
    let started;
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        pipelining: 1,
        timeout: 10,
        sampleInt: 100, // the run stops on a sample tick: a fine tick keeps fractional durations exact
        requests,
        excludeErrorStats: true,
        ...(overallRate ? { overallRate } : {}),
      },
      (err, result) => {
        if (err) return reject(err);
        resolve({
          ok,
          latenciesMs: Float64Array.from(latencies),
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
        });
      },
    );
    instance.once('start', () => {
      started = process.hrtime.bigint();
    });
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      // Requests issued before 'start' (each client's first, queued while autocannon was still building
      // the other clients) would be charged that build time: leave them out.
      if (started === undefined || process.hrtime.bigint() - BigInt(Math.round(responseTimeMs * 1e6)) < started) return;
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies.push(responseTimeMs);
      }
    });
  });
}
