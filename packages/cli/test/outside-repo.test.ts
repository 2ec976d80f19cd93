/**
 * Flint used from a project of one's own, outside this repository, the way docs/getting-started.md
 * says: `npm run pack` (scripts/pack.mjs) writes the five tarballs; `npm exec --package=… -- flint init
 * --packages` creates a project in a temp folder; `npm install` installs it from the tarballs (the npm
 * registry serves only the third-party dependencies); the installed `flint start` runs the engine with
 * the generated worker on free ports; the installed `flint trigger` and an HTTP request call it; SIGINT
 * stops it with exit code 0. Also checks what each tarball holds and that init refuses to overwrite.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const version = (JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;
const PACKAGES = ['protocol', 'engine', 'sdk', 'console', 'cli'] as const;
const progress = (line: string) => console.log(`[outside-repo] ${line}`);

/**
 * The environment of a user's shell: without what `npm test` adds (the repository as npm's project,
 * its node_modules/.bin on PATH, the running script's package), and without a FLINT_URL of the caller.
 */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_|npm_command$|npm_config_local_prefix$|INIT_CWD$|FLINT_)/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.startsWith(root))
    .join(delimiter);
  return { ...env, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, timeout = 180_000): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { cwd, env: userEnv(), timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function ok(file: string, args: string[], cwd: string): Promise<string> {
  const result = await run(file, args, cwd);
  if (result.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tarball = (name: string) => `flint-${name}-${version}.tgz`;

let tmp: string;
let packed: string;
let app: string;

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'flint-outside-')));
  packed = join(tmp, 'packed');
  app = join(tmp, 'my-app');
  expect(tmp.startsWith(root)).toBe(false);
  progress(`npm run pack -- --out ${packed}`);
  const out = await ok(process.execPath, [join(root, 'scripts/pack.mjs'), '--out', packed], root);
  expect(out).toContain(`npm install ${packed}/*.tgz`);
}, 180_000);

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  removeNpxCacheEntries(tmp);
});

/** npm exec keeps what it installed under <cache>/_npx/<hash>; drop the entries that point into `folder`. */
function removeNpxCacheEntries(folder: string): void {
  const npx = join(process.env.npm_config_cache ?? join(process.env.HOME ?? tmpdir(), '.npm'), '_npx');
  if (!existsSync(npx)) return;
  for (const entry of readdirSync(npx)) {
    const manifest = join(npx, entry, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(folder)) rmSync(join(npx, entry), { recursive: true, force: true });
  }
}

describe('the tarballs of npm run pack', () => {
  it('are the five packages, each with dist/ and types, a README and no tests or build info', async () => {
    expect(readdirSync(packed).sort()).toEqual(PACKAGES.map(tarball).sort());
    for (const name of PACKAGES) {
      const listing = await ok('tar', ['-tvzf', join(packed, tarball(name))], tmp);
      const entries = new Map(
        listing
          .trim()
          .split('\n')
          .map((line) => [line.split(/\s+/).at(-1) as string, line.split(/\s+/)[0] as string]),
      );
      const paths = [...entries.keys()];
      expect(paths, name).toEqual(expect.arrayContaining(['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']));
      expect(
        paths.filter((p) => /\/test\/|\.test\.|tsbuildinfo|tsconfig/.test(p)),
        name,
      ).toEqual([]);
      if (name === 'cli') expect(entries.get('package/bin/flint.js')).toBe('-rwxr-xr-x');
      // The console ships its built web app and its own bin.
      if (name === 'console') {
        expect(entries.get('package/bin/flint-console.js')).toBe('-rwxr-xr-x');
        expect(paths).toEqual(expect.arrayContaining(['package/dist/web/index.html']));
      }

      const manifest = JSON.parse(await ok('tar', ['-xzOf', join(packed, tarball(name)), 'package/package.json'], tmp)) as Record<string, unknown>;
      expect(manifest, name).toMatchObject({ name: `@flint/${name}`, version, type: 'module', license: 'Apache-2.0', engines: { node: '>=20.19' } });
      expect(manifest.description, name).toEqual(expect.any(String));
      // One entry per package; the SDK adds its browser stream client, which must be in the tarball too.
      const entry = { '.': { types: './dist/index.d.ts', default: './dist/index.js' } };
      const streamClient = { './stream-client': { types: './dist/stream-client/index.d.ts', default: './dist/stream-client/index.js' } };
      expect(manifest.exports, name).toEqual(name === 'sdk' ? { ...entry, ...streamClient } : entry);
      if (name === 'sdk') expect(paths).toEqual(expect.arrayContaining(['package/dist/stream-client/index.js', 'package/dist/stream-client/index.d.ts']));
      // One version for all: each package depends on exactly this version of the others.
      const own = Object.entries((manifest.dependencies ?? {}) as Record<string, string>).filter(([dep]) => dep.startsWith('@flint/'));
      for (const [dep, range] of own) expect(range, `${name} → ${dep}`).toBe(version);
    }
  }, 60_000);
});

describe('a project outside the repository', () => {
  let engine: ChildProcessWithoutNullStreams | undefined;

  afterAll(async () => {
    if (engine && engine.exitCode === null && engine.signalCode === null) {
      engine.kill('SIGKILL');
      await new Promise((r) => engine?.once('exit', r));
    }
  });

  it('is created by flint init from the tarballs, installs, runs its worker and answers calls', async () => {
    const packages = PACKAGES.map((name) => `--package=${join(packed, tarball(name))}`);
    progress(`npm exec --yes ${packages.join(' ')} -- flint init my-app --packages ${packed}   (in ${tmp})`);
    const created = await ok(npm, ['exec', '--yes', ...packages, '--', 'flint', 'init', 'my-app', '--packages', packed], tmp);
    expect(created).toContain(`Created a Flint project in ${app}`);

    progress('npm install --prefer-offline --no-audit --no-fund');
    await ok(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund'], app);
    // Every Flint package comes from its tarball, once: none from the registry, none nested twice.
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    const flintEntries = Object.entries(lock.packages).filter(([path]) => path.includes('@flint/'));
    expect(flintEntries.map(([path]) => path).sort()).toEqual(PACKAGES.map((name) => `node_modules/@flint/${name}`).sort());
    for (const [path, entry] of flintEntries) expect(entry.resolved, path).toMatch(new RegExp(`^file:.*flint-${path.split('/').at(-1)}-${version}\\.tgz$`));
    const flintBin = join(app, 'node_modules/.bin/flint');
    expect(realpathSync(flintBin)).toBe(join(app, 'node_modules/@flint/cli/bin/flint.js'));

    const scripts = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe('flint start --worker "node worker.mjs"');
    progress('node_modules/.bin/flint start --worker "node worker.mjs"   (FLINT_BRIDGE_PORT=0 FLINT_HTTP_PORT=0)');
    const child = spawn(flintBin, ['start', '--worker', 'node worker.mjs'], { cwd: app, env: userEnv({ FLINT_BRIDGE_PORT: '0', FLINT_HTTP_PORT: '0' }) });
    engine = child;
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await until(
      () => /\[worker \d+\] worker connected/.test(output),
      30_000,
      () => `the worker to connect:\n${output}`,
    );
    const bridge = /bridge\s+(ws:\/\/\S+)/.exec(output)?.[1] as string;
    const http = /http\s+(http:\/\/\S+)/.exec(output)?.[1] as string;
    expect(output).toContain(`config   ${join(app, 'flint-config.yaml')}`);
    expect(output).toContain('modules  flint-http, flint-state');

    progress(`flint trigger --function-id hello::world (FLINT_URL=${bridge})`);
    const called = await new Promise<Run>((done) => {
      execFile(
        flintBin,
        ['trigger', '--function-id', 'hello::world', '--payload', '{"name":"Ada"}'],
        { cwd: app, env: userEnv({ FLINT_URL: bridge }) },
        (err, stdout, stderr) => done({ code: err ? 1 : 0, stdout, stderr }),
      );
    });
    expect(called.stderr).toBe('');
    expect(JSON.parse(called.stdout)).toEqual({ message: 'Hello, Ada!' });

    progress(`GET ${http}/hello/Ada`);
    const response = await until(
      async () => {
        const res = await fetch(`${http}/hello/Ada`);
        return res.status === 200 ? res : undefined;
      },
      10_000,
      () => `GET /hello/Ada to answer 200:\n${output}`,
    );
    expect(await response.json()).toEqual({ message: 'Hello, Ada!' });

    progress('SIGINT');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('engine stopped');
  }, 240_000);

  it('flint init refuses to overwrite the project', async () => {
    const again = await run(join(app, 'node_modules/.bin/flint'), ['init'], app);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(
      `files_exist: ${app} already has package.json, flint-config.yaml, worker.mjs, .gitignore, README.md; pass --force to overwrite`,
    );
  });
});

/** Polls `check` every 100 ms until it returns a truthy value; fails naming `what` after `ms`. */
async function until<T>(check: () => T | Promise<T>, ms: number, what: () => string): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
