/**
 * A Flint engine in its own process, for the state crash tests: file_based state in the folder given
 * as argv[2] (compacting after argv[3] bytes, default 64 KiB so snapshots happen during a test), bridge
 * on an ephemeral port. Prints one JSON line `{"bridgeUrl": ...}` on stdout once it is serving (or
 * `{"error": ...}` and exits 1 when start-up fails). SIGTERM stops it gracefully (engine.stop()) and
 * exits 0; SIGKILL is the crash.
 */
import { startEngine } from '@flint/engine';

const dir = process.argv[2];
const compactAfterBytes = Number(process.argv[3] ?? 64 * 1024);
if (!dir) {
  process.stdout.write(`${JSON.stringify({ error: 'usage: engine-process.mjs <state folder> [compact_after_bytes]' })}\n`);
  process.exit(2);
}

let engine;
try {
  engine = await startEngine({
    config: {
      bridge: { port: 0 },
      log: { level: 'silent' },
      modules: [
        {
          name: 'flint-state',
          config: { adapter: { name: 'kv', config: { store_method: 'file_based', file_path: dir, compact_after_bytes: compactAfterBytes } } },
        },
      ],
    },
  });
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
}

process.once('SIGTERM', () => {
  engine.stop().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`stop failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(3);
    },
  );
});

process.stdout.write(`${JSON.stringify({ bridgeUrl: engine.bridgeUrl, pid: process.pid })}\n`);
