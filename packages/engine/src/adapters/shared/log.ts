/**
 * What an adapter reports through (a damaged record skipped, a connection lost and restored): the
 * `logger` of its AdapterEnv satisfies it, and so does anything with these two methods.
 */
export interface AdapterLog {
  warn(message: string): void;
  info(message: string): void;
}
