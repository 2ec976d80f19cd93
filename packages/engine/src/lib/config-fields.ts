import { z } from 'zod';

/** Config fields the engine and its modules share, with their default. */
export const positiveInt = (defaultValue: number) => z.number().int().positive().default(defaultValue);
const NOT_A_PORT = 'is not a valid port (0-65535)';
export const port = (defaultValue: number) =>
  z.number({ error: NOT_A_PORT }).int({ error: NOT_A_PORT }).min(0, { error: NOT_A_PORT }).max(65535, { error: NOT_A_PORT }).default(defaultValue);
export const host = (defaultValue = '127.0.0.1') => z.string().min(1).default(defaultValue);
