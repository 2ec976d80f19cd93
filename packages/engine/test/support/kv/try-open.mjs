// Tries to open a file_based store in each folder given and prints one JSON line per folder:
// `{"path", "ok": true}` or `{"path", "ok": false, "code", "message"}`.
//   node try-open.mjs [--as-uid <uid>] <dir>...
// Root ignores folder permissions, so a test running as root passes `--as-uid 65534` (nobody). The
// engine is loaded first and the process drops to that user only afterwards: a checkout under a
// private folder (a clone in /root, or under `mktemp -d`) is not readable by nobody.
import { openAdapter } from '@flint/engine';

const args = process.argv.slice(2);
if (args[0] === '--as-uid') {
  const uid = Number(args[1]);
  args.splice(0, 2);
  process.setgid(uid);
  process.setuid(uid);
}

for (const path of args) {
  try {
    const store = await openAdapter(
      'kv',
      { name: 'kv', config: { store_method: 'file_based', file_path: path, compact_after_bytes: 1 << 20 } },
      { configDir: '/' },
    );
    await store.set('s', 'k', 1);
    await store.close();
    process.stdout.write(`${JSON.stringify({ path, ok: true })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ path, ok: false, code: err.code, message: err.message })}\n`);
  }
}
