import { readFileSync } from 'node:fs';

/** The console package's version. */
export const CONSOLE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
