// What bench/invoke's and bench/http's "tracing cost" comparisons share: the flint-observability entry
// the traced engine adds to its modules (a span for every invocation, kept in memory, every trace
// sampled), and checks that an engine does or does not trace (asked over IPC, see engine-process.mjs).
import { request } from './proc.mjs';

/** The module entry of the traced engine: the untraced engine's modules plus this one. */
export const OBSERVABILITY = {
  name: 'flint-observability',
  // BENCH_OBSERVABILITY_CONFIG (JSON) replaces the config, e.g. to measure one part of the module at a time.
  config: process.env.BENCH_OBSERVABILITY_CONFIG
    ? JSON.parse(process.env.BENCH_OBSERVABILITY_CONFIG)
    : { enabled: true, exporter: 'memory', sampling_ratio: 1 },
};

/**
 * The span store of an engine child (`engine::health::check` of flint-observability: { spans, bytes,
 * dropped_by_count, … }), or undefined when the engine has no flint-observability.
 */
export async function spanStoreOf(engine) {
  const reply = await request(engine.child, { type: 'invoke', function_id: 'engine::health::check', payload: {} }).catch((err) => ({ err }));
  if (reply.err) {
    if (/function_not_found|not found/i.test(reply.err.message)) return undefined;
    throw reply.err;
  }
  const traces = reply.result?.components?.traces;
  // A config of one's own may turn tracing off (to measure the rest of the module).
  if (traces?.status === 'disabled' && process.env.BENCH_OBSERVABILITY_CONFIG) return { spans: 0, traced: false };
  if (traces?.status !== 'healthy') throw new Error(`${engine.name}: tracing is ${traces?.status ?? 'absent'} (${JSON.stringify(traces?.details)})`);
  return traces.details.store;
}

/** Throws unless `engine` traces (`expected` true) or has no flint-observability at all (false). */
export async function expectTracing(engine, expected) {
  const store = await spanStoreOf(engine);
  if (expected && !store) throw new Error(`${engine.name} was meant to trace every call but has no flint-observability`);
  if (!expected && store) throw new Error(`${engine.name} was meant to run without flint-observability but traces (span store ${JSON.stringify(store)})`);
  return store;
}
