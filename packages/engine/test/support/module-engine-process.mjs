/**
 * A Flint engine in its own process with one module: `node module-engine-process.mjs <module name> <config
 * JSON>`, bridge on an ephemeral port (used by the queue crash tests and the cron cluster tests). Prints one
 * JSON line `{"bridgeUrl": ...}` on stdout once serving (or `{"error": ...}` and exits 1). SIGTERM stops it
 * gracefully; SIGKILL is the crash.
 */
import { startEngine } from '@flint/engine';

let engine;
try {
  const [name, json] = process.argv.slice(2);
  if (!name) throw new Error('usage: module-engine-process.mjs <module name> <config JSON>');
  engine = await startEngine({
    config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ name, config: JSON.parse(json ?? '{}') }] },
  });
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
}

process.once('SIGTERM', () => {
  engine.stop().then(
    () => process.exit(0),
    () => process.exit(3),
  );
});

process.stdout.write(`${JSON.stringify({ bridgeUrl: engine.bridgeUrl, pid: process.pid })}\n`);
