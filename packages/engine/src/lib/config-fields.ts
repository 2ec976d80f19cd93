import { z } from 'zod';

/** Config fields the engine and its modules share, with their default. */
export const positiveInt = (defaultValue: number) => z.number().int().positive().default(defaultValue);
export const port = (defaultValue: number) => z.number().int().min(0).max(65535).default(defaultValue);
export const host = (defaultValue = '127.0.0.1') => z.string().min(1).default(defaultValue);
