// Opens a file_based builtin queue and holds it (and its LOCK) until killed.
//   node holder.mjs <dir>     prints `ready <pid>` once the queue is open
import { openAdapter } from '@flint/engine';

const [dir] = process.argv.slice(2);
const queue = await openAdapter('queue', { name: 'builtin', config: { store_method: 'file_based', file_path: dir } }, { configDir: process.cwd() });
await queue.publish('holder', { data: process.pid });
process.stdout.write(`ready ${process.pid}\n`);
setInterval(() => {}, 1 << 30);
