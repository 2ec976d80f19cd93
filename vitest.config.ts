import { defineConfig } from 'vitest/config';

// Tests import our packages by their public names (@flint/engine, @flint/protocol, @flint/sdk): they
// resolve through the workspace symlinks in node_modules to the built dist/ (run `npx tsc -b` first).
// There are deliberately no aliases to src/.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The default reporter lists skipped tests and suites; the reason for a skip is printed by the
    // test file itself (describe.skipIf(...) with a console message), which the default reporter shows.
    reporters: ['default'],
    // iii-sdk prints `[iii] …` / `[OTel] …` status lines for every worker it starts; they are noise here.
    onConsoleLog: (line) => !/^\[(iii|OTel)\]/.test(line),
  },
});
