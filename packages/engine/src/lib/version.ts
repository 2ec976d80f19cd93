import { createRequire } from 'node:module';

/** The engine package's version (for `engine::config::get`, health and the OTel resource). */
export const ENGINE_VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
