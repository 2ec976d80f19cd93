// Summarises the garbage-collection trace a bench's children print with BENCH_TRACE_GC=1 (V8's
// --trace-gc-nvp lines, which startChild passes on to stderr as `[<child name>] …`): per child and kind of
// collection (s: scavenge, mc: mark-compact, ms: minor mark-sweep), how many, their mean pause and the mean
// bytes promoted to the old generation. Many megabytes promoted per scavenge mean that short-lived objects
// are kept alive past one (see SequenceTable in @flint/protocol).
//
//   BENCH_TRACE_GC=1 node bench/cluster.mjs 2> /tmp/gc.log; node bench/support/gc-summary.mjs /tmp/gc.log
import { readFileSync } from 'node:fs';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node bench/support/gc-summary.mjs <stderr of a bench run with BENCH_TRACE_GC=1>…');
  process.exit(1);
}

const rows = new Map();
for (const file of files) {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const child = /^\[([^\]]+)\] .*\bgc=(\w+)/.exec(line);
    if (!child) continue;
    const fields = Object.fromEntries(
      line
        .slice(child[1].length + 3)
        .split(/\s+/)
        .map((kv) => kv.split('=')),
    );
    const key = `${child[1]}\t${child[2]}`;
    const row = rows.get(key) ?? { n: 0, pauseMs: 0, promoted: 0 };
    row.n++;
    row.pauseMs += Number(fields.pause) || 0;
    row.promoted += Number(fields.promoted) || 0;
    rows.set(key, row);
  }
}
if (rows.size === 0) {
  console.error('no GC trace lines found: run the bench with BENCH_TRACE_GC=1 and keep its stderr');
  process.exit(1);
}

const table = [...rows].sort(([a], [b]) => a.localeCompare(b));
const width = Math.max(...table.map(([key]) => key.split('\t')[0].length), 'child'.length);
console.log(`${'child'.padEnd(width)}  kind  count  mean pause ms  mean promoted MB`);
for (const [key, { n, pauseMs, promoted }] of table) {
  const [name, kind] = key.split('\t');
  console.log(
    `${name.padEnd(width)}  ${kind.padEnd(4)}  ${String(n).padStart(5)}  ${(pauseMs / n).toFixed(2).padStart(13)}  ${(promoted / n / 1e6).toFixed(3).padStart(16)}`,
  );
}
