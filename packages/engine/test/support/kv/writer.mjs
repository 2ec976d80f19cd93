// Crash-test writer: opens a file_based store and writes keys 0..total-1 with 64 calls in flight,
// printing a line on stdout only once a call has resolved (the parent SIGKILLs this process).
//   node writer.mjs <dir> <total> <compact_after_bytes>
// Per index i: `a i` once set('crash', `k${i}`, {i, pad}) resolved; then for i % 5 === 0 an update
// ({i, updated: true}) acknowledged as `u i`, for i % 5 === 1 a delete acknowledged as `d i`.
import { openAdapter } from '@flint/engine';

const [dir, totalText = '100000', compactText = '67108864'] = process.argv.slice(2);
const total = Number(totalText);
const store = await openAdapter(
  'kv',
  { name: 'kv', config: { store_method: 'file_based', file_path: dir, compact_after_bytes: Number(compactText) } },
  { configDir: process.cwd() },
);
const pad = 'x'.repeat(80);
let next = 0;

async function worker() {
  while (next < total) {
    const i = next++;
    await store.set('crash', `k${i}`, { i, pad });
    process.stdout.write(`a ${i}\n`);
    if (i % 5 === 0) {
      await store.update('crash', `k${i}`, (current) => ({ value: { ...current.value, updated: true }, extra: null }));
      process.stdout.write(`u ${i}\n`);
    } else if (i % 5 === 1) {
      await store.delete('crash', `k${i}`);
      process.stdout.write(`d ${i}\n`);
    }
  }
}

await Promise.all(Array.from({ length: 64 }, worker));
await store.close();
process.stdout.write('done\n');
