/**
 * A Flint engine in its own process, for the cron cluster tests: flint-cron with the module config given
 * as JSON in argv[2], bridge on an ephemeral port. Prints one JSON line `{"bridgeUrl": ...}` on stdout once
 * serving (or `{"error": ...}` and exits 1). SIGTERM stops it gracefully; SIGKILL is the crash.
 */
import { startEngine } from '@flint/engine';

let engine;
try {
  const cronConfig = JSON.parse(process.argv[2] ?? '{}');
  engine = await startEngine({
    config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ name: 'flint-cron', config: cronConfig }] },
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
