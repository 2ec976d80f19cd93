#!/usr/bin/env node
// npm run pack [-- --out DIR]: builds every package and writes one installable tarball per package into
// DIR (default: packed/ at the repository root), replacing the tarballs of an earlier run. Then prints
// the files and the commands that use them from a project outside this repository.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'packed') } } });
const out = resolve(values.out);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** A path as a shell word: as it is when it is plain, else single-quoted. */
const q = (path) => (/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`);
const step = (line) => process.stdout.write(`pack: ${line}\n`);

step('building (tsc -b, then the console web app)');
execFileSync(npm, ['run', 'build', '--loglevel', 'error'], { cwd: root, stdio: 'inherit' });

mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) if (name.endsWith('.tgz')) rmSync(join(out, name));
step(`packing every workspace into ${out}`);
const packed = JSON.parse(
  execFileSync(npm, ['pack', '--workspaces', '--pack-destination', out, '--json', '--loglevel', 'error'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
);

const files = packed.map((p) => join(out, p.filename));
for (const p of packed) step(`${p.name}@${p.version}: ${p.filename} (${p.entryCount} files, ${(p.size / 1024).toFixed(0)} kB)`);

const cli = files.find((f) => /flint-cli-[^/\\]*\.tgz$/.test(f));
process.stdout.write(
  [
    '',
    `Tarballs in ${out}:`,
    ...files.map((f) => `  ${f}`),
    '',
    'A new project that uses them (flint init writes package.json with file: dependencies on these tarballs):',
    `  npx flint init ~/my-app --packages ${q(out)}          # from this repository`,
    `  npm exec --yes ${files.map((f) => `--package=${q(f)}`).join(' ')} -- flint init ~/my-app --packages ${q(out)}   # from any folder`,
    '  cd ~/my-app && npm install && npm start',
    '',
    'Or add them to an existing project (install them all together, so that they find each other):',
    `  npm install ${q(out)}/*.tgz`,
    '',
  ].join('\n'),
);
if (!cli) throw new Error('no flint-cli tarball was written');
