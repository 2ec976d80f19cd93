// bench/invoke's Python part: finds a Python that can run the flint SDK (≥ 3.11, `websockets`
// importable, `flint` from packages/python/src), starts bench/python/*.py children and reads their CPU
// time from /proc (Python children have no IPC channel; Linux only, n/a elsewhere), and prints the results.
//   BENCH_PYTHON: unset → try python3 on PATH, /usr/bin/python3, /usr/local/bin/python3, python;
//                 0 → skip the Python part; anything else → the interpreter to use (and only that one).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fixed, printTable, round } from './measure.mjs';

const SDK_SRC = fileURLToPath(new URL('../../packages/python/src', import.meta.url));
const pythonPath = () => [SDK_SRC, process.env.PYTHONPATH].filter(Boolean).join(delimiter);
const PROBE = `
import json, sys
out = {"version": sys.version.split()[0], "executable": sys.executable}
try:
    if sys.version_info < (3, 11):
        raise RuntimeError("Python %s < 3.11 (the flint SDK needs 3.11+)" % out["version"])
    import websockets
    out["websockets"] = getattr(websockets, "__version__", "?")
    import flint
    out["sdk"] = flint.__version__
except Exception as err:
    out["error"] = "%s: %s" % (type(err).__name__, err)
print(json.dumps(out))
`;

/** { python, executable, version, websockets, sdk } of the first usable interpreter, or { skipped: reason }. */
export function findPython() {
  const wanted = process.env.BENCH_PYTHON;
  if (wanted === '0') return { skipped: 'BENCH_PYTHON=0' };
  const candidates = wanted ? [wanted] : ['python3', '/usr/bin/python3', '/usr/local/bin/python3', 'python'];
  const tried = [];
  const seen = new Set();
  for (const python of candidates) {
    let info;
    try {
      const out = execFileSync(python, ['-c', PROBE], {
        env: { ...process.env, PYTHONPATH: pythonPath() },
        timeout: 15_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      info = JSON.parse(out.toString());
    } catch (err) {
      tried.push(`${python}: ${err.code === 'ENOENT' ? 'not found' : (err.message.split('\n')[0] ?? err)}`);
      continue;
    }
    if (seen.has(info.executable)) continue;
    seen.add(info.executable);
    if (info.error) tried.push(`${python} (${info.version}): ${info.error}`);
    else return { python, ...info };
  }
  return { skipped: `no Python that can run the flint SDK (tried ${tried.join('; ')})` };
}

/**
 * Spawns `python file …args` (PYTHONPATH: the SDK's source) and resolves with { child, info, name,
 * cpuMs } once it prints a JSON line with `ready: true`; its other stdout lines go to stderr.
 * stopChild (proc.mjs) stops it (SIGTERM); it also stops when its stdin closes.
 */
export function startPython(python, file, { name, args = [], timeoutMs = 20_000 } = {}) {
  const child = spawn(python, ['-u', fileURLToPath(new URL(`../python/${file}`, import.meta.url)), ...args], {
    env: { ...process.env, PYTHONPATH: pythonPath() },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const rl = createInterface({ input: child.stdout });
  return new Promise((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name}: no ready line within ${timeoutMs} ms`));
    }, timeoutMs);
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready`));
    };
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${name}: ${err.message}`));
    });
    child.once('exit', onExit);
    rl.on('line', (line) => {
      if (!ready && line.startsWith('{')) {
        const info = JSON.parse(line);
        if (info.ready === true) {
          ready = true;
          clearTimeout(timer);
          child.off('exit', onExit);
          resolve({ child, info, name, cpuMs: () => procCpuMs(info.pid ?? child.pid, info.clk_tck) });
          return;
        }
      }
      process.stderr.write(`[${name}] ${line}\n`);
    });
  });
}

/** CPU time (user + system, ms) of process `pid` from /proc/<pid>/stat; NaN where there is no /proc. */
function procCpuMs(pid, clkTck = 100) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clkTck; // utime, stime (fields 14, 15)
  } catch {
    return Number.NaN;
  }
}

/**
 * Prints bench/invoke's Python section (or the line saying why it was skipped or failed) and returns
 * its part of the JSON summary. `python`: findPython()'s answer plus `levels` ({ inFlight, flint, bare:
 * summarize()d samples, cpuUs: { flint, bare: [caller, engine, echo end] } }) and `failed` (a message).
 */
export function printPython(python) {
  if (python.skipped) {
    console.log(`\nPython: skipped (${python.skipped})`);
    return { skipped: python.skipped };
  }
  const about = { python: python.executable, version: python.version, websockets: python.websockets, sdk: python.sdk };
  if (python.failed) console.log(`\nPython: FAILED (${python.failed}); not counted as a bench failure unless BENCH_STRICT=1`);
  const levels = python.levels.map((l) => ({ ...l, ratio: l.flint.callsPerSec / l.bare.callsPerSec, p50Ratio: l.flint.p50Us / l.bare.p50Us }));
  if (levels.length === 0) return { ...about, failed: python.failed };
  console.log(
    `\nPython (${python.version}, ${python.executable}; websockets ${python.websockets}): Flint-Py = caller worker → engine → Python echo worker (flint SDK ${python.sdk}, 3 processes); bare-Py = bare ws client → Python websockets echo server (2 processes); same engine and caller as above, alternating rounds (latencies in µs)\n`,
  );
  printTable(
    [
      'in flight',
      'Flint-Py calls/s',
      'bare-Py calls/s',
      'Flint-Py/bare-Py calls/s',
      'Flint-Py p50',
      'Flint-Py p99',
      'bare-Py p50',
      'bare-Py p99',
      'Flint-Py/bare-Py p50',
    ],
    levels.map((l) => [
      l.inFlight,
      fixed(l.flint.callsPerSec),
      fixed(l.bare.callsPerSec),
      fixed(l.ratio, 2),
      fixed(l.flint.p50Us, 1),
      fixed(l.flint.p99Us, 1),
      fixed(l.bare.p50Us, 1),
      fixed(l.bare.p99Us, 1),
      fixed(l.p50Ratio, 2),
    ]),
  );
  console.log('\nCPU time per call, Python (µs; every call of every round, warm-ups included; Python processes from /proc, 10 ms ticks)\n');
  const label = { flint: 'Flint-Py (caller → engine → Python echo worker)', bare: 'bare-Py (ws client → Python echo server)' };
  printTable(
    ['in flight', 'system', 'caller', 'engine', 'Python end', 'total'],
    levels.flatMap((l) =>
      ['bare', 'flint'].map((name) => {
        const [c, m, e] = l.cpuUs[name];
        return [l.inFlight, label[name], fixed(c, 1), name === 'flint' ? fixed(m, 1) : '-', fixed(e, 1), fixed(c + m + e, 1)];
      }),
    ),
  );
  const stats = (s) => ({ callsPerSec: round(s.callsPerSec, 0), p50Us: round(s.p50Us, 1), p99Us: round(s.p99Us, 1), calls: s.calls });
  const cpu = ([c, m, e]) => ({ caller: round(c, 1), engine: round(m, 1), end: round(e, 1), total: round(c + m + e, 1) });
  return {
    ...about,
    failed: python.failed,
    levels: levels.map((l) => ({
      inFlight: l.inFlight,
      flint: stats(l.flint),
      bare: stats(l.bare),
      throughputRatio: round(l.ratio, 3),
      p50Ratio: round(l.p50Ratio, 3),
      cpuUsPerCall: { flint: cpu(l.cpuUs.flint), bare: cpu(l.cpuUs.bare) },
    })),
  };
}
