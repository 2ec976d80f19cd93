export type * from './api-types.js';
export { MUTATION_HEADER } from './api-types.js';
export { addConsoleOptions, flagsOf, main, runConsole, serveConsole } from './cli.js';
export { type ConsoleFlags, type ConsoleOptions, ConsoleOptionsError, isLoopback, resolveOptions } from './options.js';
export { type ConsoleLog, type ConsoleServer, startConsole } from './server.js';
export { CONSOLE_VERSION } from './version.js';
