import { type Engine, startEngine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const engines: Engine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.stop();
});

function connect(url: string, autoPong: boolean): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { autoPong });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function listed(engine: Engine, id: string): Promise<boolean> {
  const { functions } = (await engine.invoke('engine::functions::list', {})) as { functions: { function_id: string }[] };
  return functions.some((f) => f.function_id === id);
}

describe('bridge keep-alive', () => {
  it('drops a peer that stops answering pings and cleans up what it registered; live peers stay', async () => {
    const engine = await startEngine({ config: { bridge: { port: 0, ping_interval_ms: 100 }, log: { level: 'silent' } } });
    engines.push(engine);
    const dead = await connect(engine.bridgeUrl, false);
    const live = await connect(engine.bridgeUrl, true);
    dead.send(JSON.stringify({ type: 'registerfunction', id: 'dead::fn' }));
    live.send(JSON.stringify({ type: 'registerfunction', id: 'live::fn' }));
    const closed = new Promise<number>((resolve) => dead.once('close', (code) => resolve(code)));
    const started = Date.now();
    await expect.poll(() => listed(engine, 'dead::fn')).toBe(true);

    const code = await closed;
    // Terminated without a close frame (what a dead peer would see), two intervals at most.
    expect(code).toBe(1006);
    expect(Date.now() - started).toBeLessThan(1000);
    await expect.poll(() => listed(engine, 'dead::fn')).toBe(false);

    // The peer that answers pings (ws does so by default) is still connected several intervals later.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(live.readyState).toBe(WebSocket.OPEN);
    expect(await listed(engine, 'live::fn')).toBe(true);
    expect(engine.stats().workers).toBe(1);
    live.close();
  });
});
