import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '@flint/protocol';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../../docs/errors.md'), 'utf8');
const documented = new Set([...doc.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1] as string));

describe('docs/errors.md', () => {
  it('documents every code of the catalogue', () => {
    expect(Object.keys(ERROR_CODES).filter((code) => !documented.has(code))).toEqual([]);
  });

  it('documents no code that the catalogue lacks', () => {
    expect([...documented].filter((code) => !(code in ERROR_CODES))).toEqual([]);
  });
});
