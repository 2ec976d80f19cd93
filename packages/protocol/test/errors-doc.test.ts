import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLOSE_CODES, ERROR_CODES, type ErrorSpec, closeReason, errorStatus, formatError } from '@flint/protocol';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../../docs/errors.md'), 'utf8');
/** `| \`code\` | status | meaning | cause |` rows of the code table. */
const documented = new Map(
  [...doc.matchAll(/^\| `([A-Za-z_]+)` \| ([^|]+) \| ([^|]+) \|/gm)].map((m) => [m[1] as string, { status: m[2]?.trim(), summary: m[3]?.trim() }]),
);
/** `| 1009 | \`reason\` | when |` rows of the close-code table. */
const closeRows = new Map([...doc.matchAll(/^\| (\d{4}) \| `([^`]+)` \|/gm)].map((m) => [Number(m[1]), m[2]]));

describe('docs/errors.md', () => {
  it('documents every code of the catalogue with its HTTP status and meaning', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES) as [string, ErrorSpec][]) {
      expect(documented.get(code), code).toEqual({ status: spec.status === undefined ? '—' : String(spec.status), summary: spec.summary });
    }
  });

  it('documents no code that the catalogue lacks', () => {
    expect([...documented.keys()].filter((code) => !(code in ERROR_CODES))).toEqual([]);
  });

  it('shows the close reasons the engine sends', () => {
    expect(Object.fromEntries(closeRows)).toEqual(Object.fromEntries(Object.entries(CLOSE_CODES).map(([code, v]) => [Number(code), v.reason])));
  });
});

describe('the catalogue', () => {
  it('fills message templates and looks statuses up', () => {
    expect(formatError('route_not_found', { method: 'GET', path: '/x' })).toBe('No route for GET /x');
    expect(formatError('invocation_timeout', { function_id: 'a::b' })).toBe('Invocation of a::b timed out after {timeout_ms} ms');
    expect(errorStatus('payload_too_large')).toBe(413);
    expect(errorStatus('function_not_found')).toBe(500);
    expect(closeReason(1009, { setting: 'bridge.max_frame_bytes', limit: 10 })).toBe('frame exceeds bridge.max_frame_bytes (10 bytes)');
  });
});
