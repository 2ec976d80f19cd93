/**
 * Telemetry on `/otel` is bounded in bytes: with no module consuming it every frame is counted and
 * dropped at once (nothing is kept); a module subscribed through `ctx.telemetry` gets every frame and
 * the engine keeps the newest within `telemetry.buffer_bytes` / `buffer_frames`, letting go of them
 * when the last subscription ends.
 */
import type { Engine, ModuleContext, TelemetryFrame } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeModule, startWithModules } from '../module-api/fake-module.js';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine } from '../support/harness.js';
import { captureLog } from '../support/log-capture.js';
import { RawClient } from '../support/raw-client.js';
import { waitFor } from '../support/util.js';

afterEach(cleanup);

const MiB = 1024 * 1024;

/** An OTLP frame of exactly `size` bytes (prefix included) whose payload starts with `n`. */
function otlpFrame(n: number, size: number): Buffer {
  const frame = Buffer.alloc(size, 0x61);
  frame.write('OTLP', 0, 'latin1');
  frame.writeUInt32BE(n, 4);
  return frame;
}

const received = (engine: Engine) => engine.stats().telemetryFrames + engine.stats().telemetryDroppedFrames;

describe('telemetry with no module consuming it', () => {
  it('counts every frame and its bytes as dropped and keeps none, logging it once at info', async () => {
    const capture = captureLog('info');
    const engine = await startTestEngine({}, { logger: capture.logger });
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    for (let i = 0; i < 20; i++) otel.sendBinary(otlpFrame(i, MiB));
    otel.sendBinary(Buffer.from('MTRC{"resourceMetrics":[]}'));
    await waitFor(
      () => engine.stats().telemetryDroppedFrames === 21,
      5000,
      () => `21 dropped frames (${JSON.stringify(engine.stats())})`,
    );
    expect(engine.stats()).toMatchObject({
      telemetryFrames: 0,
      telemetryBytes: 0,
      telemetryDroppedFrames: 21,
      telemetryDroppedBytes: 20 * MiB + Buffer.byteLength('MTRC{"resourceMetrics":[]}'),
    });
    const told = capture.records.filter((r) => /telemetry/.test(String(r.msg)));
    expect(told).toEqual([expect.objectContaining({ msg: 'telemetry from workers is counted and dropped: no module consumes it', dropped_frames: 1 })]);
  });

  it('ignores text frames and unknown prefixes (they are not telemetry)', async () => {
    const engine = await startTestEngine();
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    otel.sendBinary(Buffer.from('XXXXnot telemetry'));
    otel.ws.send('OTLP as text');
    otel.sendBinary(Buffer.from('LOGS{}'));
    await waitFor(() => engine.stats().telemetryDroppedFrames === 1, 2000, 'the LOGS frame to be counted');
    expect(engine.stats().telemetryDroppedBytes).toBe(6);
  });
});

describe('telemetry consumed by a module (ctx.telemetry.subscribe)', () => {
  function consumer(seen: TelemetryFrame[]) {
    let ctx: ModuleContext | undefined;
    let unsubscribe: () => void = () => {};
    const def = fakeModule('test-consumer', {
      start: (c) => {
        ctx = c;
        unsubscribe = c.telemetry.subscribe((frame) => void seen.push(frame));
      },
    });
    return { def, ctx: () => ctx as ModuleContext, unsubscribe: () => unsubscribe() };
  }

  it('delivers every frame and keeps the newest within telemetry.buffer_bytes, counting the rest as dropped', async () => {
    const seen: TelemetryFrame[] = [];
    const module = consumer(seen);
    const engine = await startWithModules([module.def], [{ name: 'test-consumer' }], { telemetry: { buffer_bytes: 3 * MiB } });
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    for (let i = 0; i < 10; i++) otel.sendBinary(otlpFrame(i, MiB));
    await waitFor(
      () => received(engine) === 10,
      5000,
      () => `10 frames (${JSON.stringify(engine.stats())})`,
    );
    expect(seen.map((f) => f.payload.readUInt32BE(0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(engine.stats()).toMatchObject({ telemetryFrames: 3, telemetryBytes: 3 * MiB, telemetryDroppedFrames: 7, telemetryDroppedBytes: 7 * MiB });
    const kept = module.ctx().telemetry.frames();
    expect(kept.map((f) => [f.kind, f.payload.readUInt32BE(0), f.payload.length])).toEqual([
      ['OTLP', 7, MiB - 4],
      ['OTLP', 8, MiB - 4],
      ['OTLP', 9, MiB - 4],
    ]);
  });

  it('keeps at most telemetry.buffer_frames frames, each holding only its own bytes', async () => {
    const seen: TelemetryFrame[] = [];
    const module = consumer(seen);
    const engine = await startWithModules([module.def], [{ name: 'test-consumer' }], { telemetry: { buffer_frames: 5 } });
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    // Small frames sent together arrive in one socket read; a kept frame must not keep that read's buffer.
    for (let i = 0; i < 50; i++) otel.sendBinary(otlpFrame(i, 64));
    await waitFor(() => received(engine) === 50, 2000, '50 frames');
    expect(engine.stats()).toMatchObject({ telemetryFrames: 5, telemetryBytes: 5 * 64, telemetryDroppedFrames: 45, telemetryDroppedBytes: 45 * 64 });
    const kept = module.ctx().telemetry.frames();
    expect(kept.map((f) => f.payload.readUInt32BE(0))).toEqual([45, 46, 47, 48, 49]);
    for (const frame of kept) expect(frame.payload.buffer.byteLength).toBe(frame.payload.length);
  });

  it('delivers a frame larger than the byte cap without keeping it', async () => {
    const seen: TelemetryFrame[] = [];
    const module = consumer(seen);
    const engine = await startWithModules([module.def], [{ name: 'test-consumer' }], { telemetry: { buffer_bytes: MiB } });
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    otel.sendBinary(otlpFrame(1, 2 * MiB));
    await waitFor(() => seen.length === 1, 2000, 'the frame to be delivered');
    expect(engine.stats()).toMatchObject({ telemetryFrames: 0, telemetryBytes: 0, telemetryDroppedFrames: 1, telemetryDroppedBytes: 2 * MiB });
  });

  it('lets go of the kept frames when the last subscription ends, and drops what comes after', async () => {
    const seen: TelemetryFrame[] = [];
    const module = consumer(seen);
    const engine = await startWithModules([module.def], [{ name: 'test-consumer' }]);
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    for (let i = 0; i < 3; i++) otel.sendBinary(otlpFrame(i, 1000));
    await waitFor(() => engine.stats().telemetryFrames === 3, 2000, 'three kept frames');
    module.unsubscribe();
    expect(engine.stats()).toMatchObject({ telemetryFrames: 0, telemetryBytes: 0, telemetryDroppedFrames: 0 });
    expect(module.ctx().telemetry.frames()).toEqual([]);
    otel.sendBinary(otlpFrame(3, 1000));
    await waitFor(() => engine.stats().telemetryDroppedFrames === 1, 2000, 'the next frame to be dropped');
    expect(seen).toHaveLength(3);
    expect(engine.stats().telemetryBytes).toBe(0);
  });

  it("ends the module's subscription when the engine stops", async () => {
    const module = consumer([]);
    const engine = await startWithModules([module.def], [{ name: 'test-consumer' }]);
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    otel.sendBinary(otlpFrame(0, 1000));
    await waitFor(() => engine.stats().telemetryFrames === 1, 2000, 'one kept frame');
    await engine.stop();
    expect(engine.stats()).toMatchObject({ telemetryFrames: 0, telemetryBytes: 0 });
  });
});
