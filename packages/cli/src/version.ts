import { readFileSync } from 'node:fs';

/** The version of this package (`@flint/cli`), read from its package.json next to dist/. */
export const CLI_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
