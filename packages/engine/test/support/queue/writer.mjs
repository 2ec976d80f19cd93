// Crash-test writer: opens a file_based builtin queue (no engine) and publishes messages 0..total-1
// to queue `crash`, 32 in flight, printing `<index> <id>` on stdout only once a publish has resolved
// (the parent SIGKILLs this process mid-burst).
//   node writer.mjs <dir> <total>
import { openAdapter } from '@flint/engine';

const [dir, totalText = '5000'] = process.argv.slice(2);
const total = Number(totalText);
const queue = await openAdapter('queue', { name: 'builtin', config: { store_method: 'file_based', file_path: dir } }, { configDir: process.cwd() });
const pad = 'x'.repeat(200);
let next = 0;

async function worker() {
  while (next < total) {
    const i = next++;
    const { id } = await queue.publish('crash', { data: { i, pad } });
    process.stdout.write(`${i} ${id}\n`);
  }
}

await Promise.all(Array.from({ length: 32 }, worker));
await queue.close();
process.stdout.write('done\n');
