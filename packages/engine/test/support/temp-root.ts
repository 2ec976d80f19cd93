import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A temporary folder for a test file (made before its tests, removed after them) and fresh folder paths
 * inside it (`newDir('state')` → `<root>/state-1`, not created). Call at the top level of the file.
 */
export function tempRoot(prefix: string): { readonly path: string; newDir(name: string): string } {
  let path = '';
  let count = 0;
  beforeAll(async () => {
    path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await rm(path, { recursive: true, force: true });
  });
  return {
    get path() {
      return path;
    },
    newDir: (name) => join(path, `${name}-${++count}`),
  };
}
