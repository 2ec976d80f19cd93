/**
 * Runs the Python SDK's checks (`npm test` ends with this): mypy --strict on packages/python/src when
 * mypy is installed, then its pytest suite, which starts a real engine. It uses the first Python ≥ 3.11
 * that has `websockets` and `pytest` (FLINT_PYTHON, then python3, then /usr/bin/python3). Where there
 * is none, the tests are skipped with the reason printed, except under FLINT_REQUIRE_SERVICES=1 (CI),
 * where that is a failure.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = join(root, 'packages', 'python');
const required = process.env.FLINT_REQUIRE_SERVICES === '1';
const probe =
  'import sys\nif sys.version_info < (3, 11): raise SystemExit("Python %d.%d is too old (3.11 or later is needed)" % sys.version_info[:2])\n' +
  'import websockets, pytest\nprint("%d.%d.%d" % sys.version_info[:3], websockets.__version__, pytest.__version__)';

const candidates = [...new Set([process.env.FLINT_PYTHON, 'python3', '/usr/bin/python3'].filter(Boolean))];
const problems = [];
let python;
let versions;
for (const candidate of candidates) {
  const out = spawnSync(candidate, ['-c', probe], { encoding: 'utf8' });
  if (out.error) {
    problems.push(`${candidate}: not found`);
    continue;
  }
  if (out.status !== 0) {
    const last = (out.stderr || out.stdout).trim().split('\n').pop();
    problems.push(`${candidate}: ${last}`);
    continue;
  }
  python = candidate;
  versions = out.stdout.trim().split(' ');
  break;
}

if (!python) {
  const reason = `no Python 3.11+ with websockets and pytest (${problems.join('; ')}); on Debian: apt install python3-websockets python3-pytest`;
  if (required) {
    console.error(`python tests: FAILED: ${reason} (FLINT_REQUIRE_SERVICES=1)`);
    process.exit(1);
  }
  console.log(`python tests: skipped: ${reason}`);
  process.exit(0);
}

const [py, ws, pytest] = versions;
console.log(`python tests: ${python} (Python ${py}, websockets ${ws}, pytest ${pytest})`);

const mypy = spawnSync(python, ['-m', 'mypy', '--version'], { encoding: 'utf8' });
if (mypy.status === 0) {
  console.log(`python typecheck: ${mypy.stdout.trim()} --strict`);
  const check = spawnSync(python, ['-m', 'mypy'], { cwd: pkg, stdio: 'inherit' });
  if (check.status !== 0) process.exit(check.status ?? 1);
} else {
  console.log('python typecheck: skipped: mypy is not installed for this Python (Debian: apt install python3-mypy)');
}

const run = spawnSync(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], { cwd: pkg, stdio: 'inherit' });
process.exit(run.status ?? 1);
