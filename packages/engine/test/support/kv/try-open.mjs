// Tries to open a file_based store in each folder given and prints one JSON line per folder:
// `{"path", "ok": true}` or `{"path", "ok": false, "code", "message"}`. Run as an unprivileged user by
// the tests when they run as root (root ignores folder permissions).
//   node try-open.mjs <dir>...
import { openAdapter } from '@flint/engine';

for (const path of process.argv.slice(2)) {
  try {
    const store = await openAdapter(
      'kv',
      { name: 'kv', config: { store_method: 'file_based', file_path: path, compact_after_bytes: 1 << 20 } },
      { configDir: process.cwd() },
    );
    await store.set('s', 'k', 1);
    await store.close();
    process.stdout.write(`${JSON.stringify({ path, ok: true })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ path, ok: false, code: err.code, message: err.message })}\n`);
  }
}
