/** Sends SDK-style telemetry frames (a 4-byte prefix, then OTLP/JSON or raw bytes) on the bridge's `/otel` path. */
import type { Engine } from '@flint/engine';
import WebSocket from 'ws';

/** Opens `/otel`, sends one binary frame per body and closes once they are written. */
export async function sendTelemetry(engine: Engine, prefix: 'OTLP' | 'LOGS' | 'MTRC', ...bodies: (object | string)[]): Promise<void> {
  const ws = new WebSocket(`${engine.bridgeUrl}/otel`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  for (const body of bodies) {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    await new Promise<void>((resolve, reject) => ws.send(Buffer.from(prefix + text), { binary: true }, (err) => (err ? reject(err) : resolve())));
  }
  ws.close();
}
