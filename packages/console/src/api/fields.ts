import { badRequest } from '../http/failure.js';

/** A required non-empty string field of a request body. */
export function requiredString(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string' || value === '') throw badRequest(`${key} is required (a non-empty string)`);
  return value;
}

/** An optional non-negative integer query parameter. */
export function queryInt(query: URLSearchParams, key: string, fallback: number, max: number): number {
  const text = query.get(key);
  if (text === null || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > max) throw badRequest(`${key} must be an integer from 0 to ${max}`);
  return n;
}

export const queryFlag = (query: URLSearchParams, key: string): boolean => query.get(key) === 'true' || query.get(key) === '1';
