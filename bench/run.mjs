// Runs every bench/*.mjs (except this file) in sequence, each in its own `node` child process.
//   npm run bench                 all benches
//   npm run bench -- invoke       only benches whose name contains "invoke" (several filters: any match)
// Exits non-zero when a bench fails (crash, or a missed target with BENCH_STRICT=1).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const filters = process.argv.slice(2);

for (const pkg of ['protocol', 'engine', 'sdk']) {
  if (!existsSync(join(root, 'packages', pkg, 'dist', 'index.js'))) {
    console.error(`packages/${pkg}/dist is missing: build first with \`npx tsc -b\``);
    process.exit(1);
  }
}

const benches = readdirSync(benchDir)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
  .map((f) => f.slice(0, -'.mjs'.length))
  .sort()
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)));
if (benches.length === 0) {
  console.error(`no bench matches ${filters.join(', ')}`);
  process.exit(1);
}

const failed = [];
const started = Date.now();
for (const name of benches) {
  console.log(`bench/${name}: running …`);
  const t0 = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [join(benchDir, `${name}.mjs`)], { stdio: 'inherit', cwd: root });
    child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
  console.log(`bench/${name}: ${code === 0 ? 'done' : `FAILED (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  if (code !== 0) failed.push(name);
}
console.log(`${benches.length} bench(es) in ${((Date.now() - started) / 1000).toFixed(1)} s${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
process.exitCode = failed.length ? 1 : 0;
