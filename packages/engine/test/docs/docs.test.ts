/**
 * The user docs (README.md, docs/*.md, the package READMEs) describe what exists: links resolve, no
 * pointer to a document a user does not have, every module named `flint-…` is one the engine loads
 * (modules still to come are listed in one place, the README's "Not built yet"), and every name a code
 * example imports from a Flint package is exported by it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as engine from '@flint/engine';
import * as protocol from '@flint/protocol';
import * as sdk from '@flint/sdk';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const docFiles = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(root, 'packages')).map((p) => `packages/${p}/README.md`),
].filter((f) => existsSync(join(root, f)));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The README's list of parts still to come: the one place that may name them. */
function withoutNotBuiltYet(file: string, text: string): string {
  if (file !== 'README.md') return text;
  return text.replace(/^## Not built yet\n[\s\S]*?(?=^## |(?![\s\S]))/m, '');
}

describe('user docs', () => {
  it('has the pages it is expected to have', () => {
    expect(docFiles).toEqual(expect.arrayContaining(['README.md', 'docs/getting-started.md', 'docs/sdk.md', 'docs/http.md', 'docs/architecture.md']));
  });

  it('links only to files that exist', () => {
    const broken: string[] = [];
    for (const file of docFiles) {
      for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z]+:/.test(target) || target.startsWith('#')) continue;
        const path = target.split('#')[0] as string;
        if (!existsSync(resolve(join(root, dirname(file)), path))) broken.push(`${file} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('points at no document a user does not have', () => {
    const pointers: string[] = [];
    for (const file of docFiles) {
      for (const m of read(file).matchAll(/\.\.\/shared|interface-spec|reference\/[a-z-]+\.md|\bthe spec\b|\bspec's\b/gi)) pointers.push(`${file}: ${m[0]}`);
    }
    expect(pointers).toEqual([]);
  });

  it('names only modules the engine loads, outside the README list of what is not built yet', async () => {
    const loaded = new Set(engine.createEngine({ cwd: root, configPath: undefined, env: {} }).config.modules.map((m) => m.name));
    expect(loaded.size).toBeGreaterThan(0);
    // Not modules: the config file, package and tarball names, the data folder, the walk-through's example, the reattach header.
    const notModules = new Set([
      'flint-config',
      'flint-cli',
      'flint-sdk',
      'flint-engine',
      'flint-protocol',
      // The console's binary and tarball (flint-console-0.1.0.tgz), its default service.name, its session cookie.
      'flint-console',
      'flint_console_token',
      'flint-data',
      'flint-project',
      'flint-ticker',
      'flint-reattach',
      // @flint/sdk's default service.name for a worker's spans.
      'flint-worker',
      // The x-flint-* request headers of HTTP functions (docs/http-functions.md).
      'flint-function',
      'flint-invocation',
      'flint-timestamp',
      'flint-signature',
    ]);
    const unknown: string[] = [];
    for (const file of docFiles) {
      for (const [name] of withoutNotBuiltYet(file, read(file)).matchAll(/\bflint-[a-z]+\b/g)) {
        if (!notModules.has(name) && !loaded.has(name)) unknown.push(`${file}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('imports in code examples name real exports of the Flint packages', () => {
    const exportsOf: Record<string, object> = { '@flint/sdk': sdk, '@flint/protocol': protocol, '@flint/engine': engine };
    const missing: string[] = [];
    for (const file of docFiles) {
      for (const [, names, pkg] of read(file).matchAll(/import \{([^}]+)\} from '(@flint\/[a-z]+)'/g)) {
        const exported = exportsOf[pkg as string];
        if (!exported) continue;
        for (const raw of (names as string).split(',')) {
          const name = raw
            .trim()
            .split(/\s+as\s+/)[0]
            ?.trim();
          if (!name || name.startsWith('type ')) continue;
          if (!(name in exported)) missing.push(`${file}: ${name} from ${pkg}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
