// Summarises .cpuprofile files (from `BENCH_CPU_PROF=<dir> npm run bench`, or node --cpu-prof):
// top functions and files by self time.   node bench/support/cpuprofile-top.mjs <file or dir>… [--top N]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 25;
const files = args.flatMap(function expand(p) {
  return statSync(p).isDirectory() ? readdirSync(p).flatMap((f) => expand(join(p, f))) : p.endsWith('.cpuprofile') ? [p] : [];
});
if (files.length === 0) {
  console.error('usage: node bench/support/cpuprofile-top.mjs <profile or folder>… [--top N]');
  process.exit(1);
}

const short = (url) => {
  if (!url) return '(native)';
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(process.cwd()) ? relative(process.cwd(), path) : path;
};

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  // timeDeltas[i] is the time before samples[i]; attribute it to that sample's node.
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map();
  const byFile = new Map();
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id);
    // (idle), (program), (garbage collector) get their own bucket instead of joining (native).
    const where = !callFrame.url && callFrame.functionName.startsWith('(') ? callFrame.functionName : short(callFrame.url);
    const fn = `${callFrame.functionName || '(anonymous)'}  ${where}${callFrame.url ? `:${callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byFile.set(where, (byFile.get(where) ?? 0) + us);
  }
  const idle = byFile.get('(idle)') ?? 0;
  console.log(`\n${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(((total - idle) / total) * 100).toFixed(1)}% busy`);
  const print = (title, map) => {
    console.log(`\n  ${title} (self time, % of busy time)`);
    for (const [k, us] of [...map]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)) {
      const share = `${((us / (total - idle)) * 100).toFixed(1)}%`;
      console.log(`  ${share.padStart(6)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
    }
  };
  print('functions', byFunction);
  print('files', byFile);
}
