import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatError } from '@flint/protocol';
import { CliError } from './client.js';

/** The packages `npm run pack` writes, by npm name, with the file-name prefix npm gives their tarballs. */
export const FLINT_PACKAGES = {
  '@flint/cli': 'flint-cli-',
  '@flint/sdk': 'flint-sdk-',
  '@flint/engine': 'flint-engine-',
  '@flint/console': 'flint-console-',
  '@flint/protocol': 'flint-protocol-',
} as const;

export type FlintPackage = keyof typeof FLINT_PACKAGES;

/**
 * Finds the tarball of each Flint package in `folder` (absolute paths by package name). Throws
 * `packages_not_found` when the folder is missing, or a package has no tarball or more than one.
 */
export function findTarballs(folder: string): Record<FlintPackage, string> {
  const dir = resolve(folder);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    throw new CliError('packages_not_found', formatError('packages_not_found', { reason: `cannot read the folder ${dir}` }));
  }
  const found = {} as Record<FlintPackage, string>;
  for (const [pkg, prefix] of Object.entries(FLINT_PACKAGES) as [FlintPackage, string][]) {
    // flint-cli-0.1.0.tgz, flint-cli-1.0.0-beta.1.tgz: the prefix then a version (which starts with a digit).
    const matches = names.filter((n) => n.startsWith(prefix) && /^\d/.test(n.slice(prefix.length)) && n.endsWith('.tgz')).sort();
    if (matches.length !== 1) {
      const what = matches.length === 0 ? `no ${prefix}<version>.tgz` : `several ${prefix}*.tgz (${matches.join(', ')})`;
      const reason = `${dir} has ${what}; it should hold the tarballs of one \`npm run pack\` in the Flint repository`;
      throw new CliError('packages_not_found', formatError('packages_not_found', { reason }));
    }
    found[pkg] = join(dir, matches[0] as string);
  }
  return found;
}
