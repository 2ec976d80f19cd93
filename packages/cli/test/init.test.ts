/**
 * `flint init`: the files it writes, refusing to overwrite, --force, --packages, and that the config it
 * writes starts an engine with the HTTP and state modules. Installing and running the project from
 * tarballs outside the repository is outside-repo.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine } from '@flint/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = join(root, 'packages/cli/bin/flint.js');
const version = (JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;
const FILES = ['package.json', 'flint-config.yaml', 'worker.mjs', '.gitignore', 'README.md'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function flint(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { cwd, timeout: 20_000 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const read = (...path: string[]) => readFileSync(join(...path), 'utf8');
const manifest = (dir: string) =>
  JSON.parse(read(dir, 'package.json')) as {
    name: string;
    type: string;
    private: boolean;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    overrides?: Record<string, string>;
  };

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'flint-init-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('flint init', () => {
  it('writes a project into a new folder and prints the files and the next steps', async () => {
    const run = await flint(['init', 'my-app'], tmp);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const dir = join(tmp, 'my-app');
    expect(readdirSync(dir).sort()).toEqual([...FILES].sort());

    const pkg = manifest(dir);
    expect(pkg).toMatchObject({ name: 'my-app', type: 'module', private: true });
    expect(pkg.scripts.start).toBe('flint start --worker "node worker.mjs"');
    expect(pkg.dependencies).toEqual({ '@flint/cli': `^${version}`, '@flint/sdk': `^${version}` });
    expect(pkg.overrides).toBeUndefined();

    const worker = read(dir, 'worker.mjs');
    expect(worker).toContain("from '@flint/sdk'");
    expect(worker).toContain('registerWorker(process.env.FLINT_URL');
    expect(worker).toContain("registerFunction('hello::world'");
    expect(worker).toContain("type: 'http'");
    expect(read(dir, '.gitignore').split('\n')).toEqual(expect.arrayContaining(['node_modules/', '.flint-data/']));
    expect(read(dir, 'README.md')).toMatch(/npm install\nnpm start/);
    expect(read(dir, 'README.md')).toContain('npx flint trigger --function-id hello::world --payload \'{"name":"Ada"}\'');

    for (const file of FILES) expect(run.stdout).toContain(`  ${file}`);
    expect(run.stdout).toContain(`Created a Flint project in ${dir} (Flint packages from the npm registry (^${version}))`);
    expect(run.stdout).toMatch(/Next steps:\n {2}cd my-app\n {2}npm install\n {2}npm start/);
  });

  it('writes a config that starts an engine with the HTTP and state modules, ports from the environment', async () => {
    const dir = join(tmp, 'my-app');
    const engine = createEngine({ configPath: join(dir, 'flint-config.yaml'), env: { FLINT_BRIDGE_PORT: '0', FLINT_HTTP_PORT: '0' } });
    expect(engine.moduleNames).toEqual(['flint-http', 'flint-state']);
    await engine.start();
    try {
      expect(engine.listeners().map((l) => l.name)).toEqual(['bridge', 'http']);
      expect(engine.bridgeUrl).not.toContain(':49134');
    } finally {
      await engine.stop();
    }
    expect(createEngine({ configPath: join(dir, 'flint-config.yaml'), env: {} }).config.bridge.port).toBe(49134);
  });

  it('refuses to overwrite, names the files, and writes nothing', async () => {
    const dir = join(tmp, 'my-app');
    writeFileSync(join(dir, 'worker.mjs'), '// mine\n');
    const run = await flint(['init', 'my-app'], tmp);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toBe(`files_exist: ${dir} already has ${FILES.join(', ')}; pass --force to overwrite`);
    expect(read(dir, 'worker.mjs')).toBe('// mine\n');

    // One existing file is enough, and the others are not created either.
    const partial = join(tmp, 'partial');
    mkdirSync(partial);
    writeFileSync(join(partial, 'README.md'), '# mine\n');
    const again = await flint(['init', partial], tmp);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(`files_exist: ${partial} already has README.md; pass --force to overwrite`);
    expect(readdirSync(partial)).toEqual(['README.md']);
  });

  it('--force overwrites and says which files it replaced', async () => {
    const dir = join(tmp, 'my-app');
    const run = await flint(['init', 'my-app', '--force'], tmp);
    expect(run.code).toBe(0);
    expect(read(dir, 'worker.mjs')).toContain("registerFunction('hello::world'");
    expect(run.stdout).toMatch(/ {2}worker\.mjs +.+\(replaced\)/);
  });

  it('defaults to the current folder and derives a valid package name from it', async () => {
    const dir = join(tmp, 'My Flint App');
    mkdirSync(dir);
    const run = await flint(['init'], dir);
    expect(run.code).toBe(0);
    expect(manifest(dir).name).toBe('my-flint-app');
    expect(run.stdout).not.toContain('  cd ');
    expect(run.stdout).toMatch(/Next steps:\n {2}npm install\n/);
  });

  it('--packages depends on the tarballs of npm run pack: file: specs, overrides for the transitive packages', async () => {
    const packed = join(tmp, 'packed');
    mkdirSync(packed);
    for (const name of ['cli', 'sdk', 'engine', 'console', 'protocol']) writeFileSync(join(packed, `flint-${name}-${version}.tgz`), '');
    const run = await flint(['init', 'local', '--packages', packed], tmp);
    expect(run.code).toBe(0);
    const pkg = manifest(join(tmp, 'local'));
    const file = (name: string) => `file:${join(packed, `flint-${name}-${version}.tgz`)}`;
    expect(pkg.dependencies).toEqual({ '@flint/cli': file('cli'), '@flint/sdk': file('sdk') });
    expect(pkg.overrides).toEqual({ '@flint/engine': file('engine'), '@flint/console': file('console'), '@flint/protocol': file('protocol') });
    expect(run.stdout).toContain(`(Flint packages from the tarballs in ${packed})`);
  });

  it('--packages without a complete set of tarballs is packages_not_found, and nothing is written', async () => {
    const incomplete = join(tmp, 'incomplete');
    mkdirSync(incomplete);
    writeFileSync(join(incomplete, 'flint-cli-0.1.0.tgz'), '');
    const run = await flint(['init', 'nothing', '--packages', incomplete], tmp);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `packages_not_found: ${incomplete} has no flint-sdk-<version>.tgz; it should hold the tarballs of one \`npm run pack\` in the Flint repository`,
    );
    const missing = await flint(['init', 'nothing', '--packages', join(tmp, 'no-such-folder')], tmp);
    expect(missing.stderr.trim()).toBe(`packages_not_found: cannot read the folder ${join(tmp, 'no-such-folder')}`);
    expect(existsSync(join(tmp, 'nothing'))).toBe(false);
  });

  it('--help explains the command', async () => {
    const run = await flint(['init', '--help'], tmp);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: flint init \[options\] \[dir\]/);
    expect(run.stdout).toContain('--packages <folder>');
    expect(run.stdout).toContain('--force');
  });
});
