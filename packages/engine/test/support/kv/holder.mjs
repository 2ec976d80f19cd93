// Opens a file_based store and holds it (and its LOCK) until killed.
//   node holder.mjs <dir>     prints `ready <pid>` once the store is open
import { openAdapter } from '@flint/engine';

const [dir] = process.argv.slice(2);
const store = await openAdapter(
  'kv',
  { name: 'kv', config: { store_method: 'file_based', file_path: dir, compact_after_bytes: 1 << 20 } },
  { configDir: process.cwd() },
);
await store.set('holder', 'pid', process.pid);
process.stdout.write(`ready ${process.pid}\n`);
setInterval(() => {}, 1 << 30);
