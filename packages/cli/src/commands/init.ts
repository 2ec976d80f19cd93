import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { formatError } from '@flint/protocol';
import { Command } from 'commander';
import { CliError } from '../client.js';
import { DEFAULT_PORTS, type ProjectSpec, projectFiles } from '../project-files.js';
import { findTarballs } from '../tarballs.js';
import { CLI_VERSION } from '../version.js';

export interface InitOptions {
  /** Overwrite files that already exist. */
  force?: boolean;
  /** Folder with the tarballs of `npm run pack`: depend on them instead of the npm registry. */
  packages?: string;
}

export interface InitResult {
  /** Absolute path of the project folder. */
  dir: string;
  files: { path: string; about: string; replaced: boolean }[];
  /** Where the dependencies come from, for the report. */
  source: string;
}

/**
 * Writes a new project into `dir` (created when missing). Refuses with `files_exist`, writing nothing,
 * when one of its files is already there, unless `force`.
 */
export function init(dir = '.', options: InitOptions = {}): InitResult {
  const target = resolve(dir);
  const spec: ProjectSpec = { name: packageName(target), ...dependencies(options.packages) };
  const files = projectFiles(spec);
  const existing = files.filter((f) => existsSync(join(target, f.path))).map((f) => f.path);
  if (existing.length > 0 && !options.force) throw new CliError('files_exist', formatError('files_exist', { dir: target, files: existing.join(', ') }));
  mkdirSync(target, { recursive: true });
  for (const file of files) writeFileSync(join(target, file.path), file.content);
  return {
    dir: target,
    files: files.map((f) => ({ path: f.path, about: f.about, replaced: existing.includes(f.path) })),
    source: options.packages ? `the tarballs in ${resolve(options.packages)}` : `the npm registry (^${CLI_VERSION})`,
  };
}

/** Version specs for the project's package.json: the registry range, or `file:` specs of local tarballs. */
function dependencies(packages: string | undefined): Pick<ProjectSpec, 'dependencies' | 'overrides'> {
  if (packages === undefined) return { dependencies: { '@flint/cli': `^${CLI_VERSION}`, '@flint/sdk': `^${CLI_VERSION}` } };
  const tarballs = findTarballs(packages);
  // Absolute: the project does not depend on where it sits relative to the tarballs.
  const file = (path: string) => `file:${path.split(sep).join('/')}`;
  return {
    dependencies: { '@flint/cli': file(tarballs['@flint/cli']), '@flint/sdk': file(tarballs['@flint/sdk']) },
    // @flint/cli and @flint/sdk depend on these by version; without overrides npm would look them up in the registry.
    overrides: {
      '@flint/engine': file(tarballs['@flint/engine']),
      '@flint/console': file(tarballs['@flint/console']),
      '@flint/protocol': file(tarballs['@flint/protocol']),
    },
  };
}

/** A valid npm package name from the folder's name ("My App" → "my-app"). */
export function packageName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, 214);
  return name || 'flint-project';
}

/** What `flint init` prints: the files, then the commands to run next. */
export function formatInitReport(result: InitResult, cwd = process.cwd()): string {
  const width = Math.max(...result.files.map((f) => f.path.length));
  const lines = [`Created a Flint project in ${result.dir} (Flint packages from ${result.source}):`];
  for (const f of result.files) lines.push(`  ${f.path.padEnd(width)}  ${f.about}${f.replaced ? ' (replaced)' : ''}`);
  const where = relative(cwd, result.dir);
  lines.push('', 'Next steps:');
  if (where !== '') lines.push(`  cd ${where.startsWith('..') || !/^[\w./-]+$/.test(where) ? JSON.stringify(result.dir) : where}`);
  lines.push(
    '  npm install',
    '  npm start          # the engine and worker.mjs; Ctrl+C stops both',
    'Then, in a second terminal in the same folder:',
    `  npx flint trigger --function-id hello::world --payload '{"name":"Ada"}'`,
    `  curl http://127.0.0.1:${DEFAULT_PORTS.http}/hello/Ada`,
  );
  return `${lines.join('\n')}\n`;
}

/** The `flint init` command; `report` prints a failure and sets the exit code. */
export function initCommand(report: (err: unknown) => void): Command {
  return new Command('init')
    .description('create a Flint project: package.json, flint-config.yaml, a first worker (worker.mjs), .gitignore and README.md')
    .argument('[dir]', 'folder for the project, created when missing', '.')
    .option('--packages <folder>', 'depend on the tarballs that `npm run pack` wrote into this folder instead of the npm registry')
    .option('-f, --force', 'overwrite files that already exist')
    .addHelpText(
      'after',
      [
        '',
        'Without --packages the project depends on @flint/cli and @flint/sdk from the npm registry',
        `(^${CLI_VERSION}). Existing files are never overwritten without --force; nothing is written then.`,
        '',
        'Examples:',
        '  flint init my-app',
        '  flint init my-app --packages ~/flint/packed',
        '  cd my-app && npm install && npm start',
      ].join('\n'),
    )
    .action((dir: string, opts: InitOptions) => {
      try {
        process.stdout.write(formatInitReport(init(dir, opts)));
      } catch (err) {
        report(err);
      }
    });
}
