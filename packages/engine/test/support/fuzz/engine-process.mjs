/**
 * A Flint engine in its own process for the upgrade fuzz (bridge/fuzz.test.ts): the bridge and a
 * flint-stream listener on ephemeral ports, short handshake time-outs. `node engine-process.mjs`
 * prints one JSON line `{"bridgeUrl", "streamUrl", "pid"}` once serving (or `{"error"}` and exits 1).
 *
 * Like `flint start` (packages/cli/src/commands/start.ts), an unhandled rejection is reported (on
 * stderr, a line starting `unhandled rejection:`) and the engine keeps serving; an uncaught exception
 * ends the process, as it ends `flint start`. The fuzz test counts either as a failure.
 */
import { startEngine } from '@flint/engine';

let engine;
try {
  engine = await startEngine({
    config: {
      bridge: { port: 0, handshake_timeout_ms: 500 },
      log: { level: 'silent' },
      modules: [{ name: 'flint-stream', config: { port: 0, headers_timeout_ms: 500 } }],
    },
  });
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
}

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\n`);
});

process.once('SIGTERM', () => {
  engine.stop().then(
    () => process.exit(0),
    () => process.exit(3),
  );
});

const stream = engine.listeners().find((l) => l.name === 'stream');
process.stdout.write(`${JSON.stringify({ bridgeUrl: engine.bridgeUrl, streamUrl: stream?.url, pid: process.pid })}\n`);
