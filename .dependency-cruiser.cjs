/**
 * Architecture rules (docs: /work/shared/design.md §2). Run with `npm run arch`
 * (`depcruise packages --config .dependency-cruiser.cjs`).
 *
 * Paths are relative to the repo root. A workspace package imported by its public name
 * (`@flint/protocol`) resolves through the node_modules symlink to its built entry
 * `packages/<name>/dist/index.{js,d.ts}`; when it is not built (or the name is a deep import
 * blocked by the package's `exports`), the dependency stays unresolved and its path is the
 * specifier itself (`@flint/engine/src/...`). The package rules match both forms.
 */

/** A workspace package, resolved (`packages/x/...`) or by name (`@flint/x`). */
const ANY_WORKSPACE_PACKAGE = '^(packages/[^/]+/|@flint/)';
const ENGINE = '^packages/engine/src/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // ---- packages (design.md §2: protocol ← engine, sdk, console; cli → engine, sdk) ----
    {
      name: 'protocol-imports-no-flint-package',
      comment: '@flint/protocol is the bottom layer: it imports no other @flint package.',
      severity: 'error',
      from: { path: '^packages/protocol/src/' },
      to: { path: ANY_WORKSPACE_PACKAGE, pathNot: '^packages/protocol/' },
    },
    {
      name: 'engine-sdk-import-only-protocol',
      comment: '@flint/engine and @flint/sdk import only @flint/protocol among our packages.',
      severity: 'error',
      from: { path: '^packages/(engine|sdk)/src/' },
      to: { path: ANY_WORKSPACE_PACKAGE, pathNot: ['^packages/($1|protocol)/', '^@flint/protocol$'] },
    },
    {
      name: 'console-imports-only-sdk-protocol',
      comment: '@flint/console reaches the engine as a worker does: through @flint/sdk (and @flint/protocol), never @flint/engine.',
      severity: 'error',
      from: { path: '^packages/console/(src|web/src)/' },
      to: { path: ANY_WORKSPACE_PACKAGE, pathNot: ['^packages/(console|sdk|protocol)/', '^@flint/(sdk|protocol)$'] },
    },
    {
      name: 'cli-imports-only-engine-sdk-console-protocol',
      comment: 'The cli (@flint/cli) may import @flint/engine, @flint/sdk, @flint/console and @flint/protocol, nothing else of ours.',
      severity: 'error',
      from: { path: '^packages/cli/src/' },
      to: { path: ANY_WORKSPACE_PACKAGE, pathNot: ['^packages/(cli|engine|sdk|protocol|console)/', '^@flint/(engine|sdk|protocol|console)$'] },
    },
    {
      name: 'no-package-internals',
      comment:
        "Another package is imported by its public name only (its dist/index entry), never its internals: no '@flint/x/src/...', '@flint/x/dist/...' deep imports.",
      severity: 'error',
      from: { path: '^packages/([^/]+)/' },
      to: { path: ['^packages/[^/]+/', '^@flint/[^/]+/.'], pathNot: ['^packages/$1/', '^packages/[^/]+/dist/index\\.(js|d\\.ts)$'] },
    },
    {
      name: 'no-relative-import-across-packages',
      comment: "A relative path never leaves its package folder ('../../protocol/...'): import the package by name.",
      severity: 'error',
      // packages/python is not an npm workspace: its test host imports @flint/engine and @flint/sdk by name,
      // which resolve through node_modules' links into packages/ and so look local from there.
      from: { path: '^packages/([^/]+)/', pathNot: '^packages/python/' },
      to: { dependencyTypes: ['local'], path: '^packages/', pathNot: '^packages/$1/' },
    },

    // ---- inside packages/engine/src (design.md §2) ----
    {
      name: 'engine-core-not-to-modules-or-adapters',
      comment:
        'core/ never imports a module or an adapter: adapter families add themselves to core/api/adapters.ts by declaration merging and the composition root hands core the adapter table.',
      severity: 'error',
      from: { path: `${ENGINE}core/` },
      to: { path: `${ENGINE}(modules|adapters)/` },
    },
    {
      name: 'engine-core-not-to-cluster',
      comment: 'core/ sees the cluster only through RemoteView (core/api/registry.ts) and remote providers; engine.ts wires cluster/ in.',
      severity: 'error',
      from: { path: `${ENGINE}core/` },
      to: { path: `${ENGINE}cluster/` },
    },
    {
      name: 'engine-cluster-not-to-modules-adapters-config',
      comment: 'cluster/ works on the core (registry, invoker, events) and never on a module, an adapter or the config loader.',
      severity: 'error',
      from: { path: `${ENGINE}cluster/` },
      to: { path: `${ENGINE}(modules/|adapters/|config/|engine\\.ts$|index\\.ts$)` },
    },
    {
      name: 'engine-core-not-to-config-or-root',
      comment: 'core/ gets its settings as plain values from the composition root; it never imports config/ or engine.ts.',
      severity: 'error',
      from: { path: `${ENGINE}core/` },
      to: { path: `${ENGINE}(config/|engine\\.ts$|index\\.ts$)` },
    },
    {
      name: 'engine-config-core-only-module-api',
      comment: 'config/ may import core/module-api.ts (module definitions and their schemas), nothing else from core/.',
      severity: 'error',
      from: { path: `${ENGINE}config/` },
      to: { path: `${ENGINE}core/`, pathNot: `${ENGINE}core/module-api\\.ts$` },
    },
    {
      name: 'engine-config-not-to-modules-adapters-root',
      comment: 'config/ validates against the module definitions it is given; it never imports modules/, adapters/ or engine.ts.',
      severity: 'error',
      from: { path: `${ENGINE}config/` },
      to: { path: `${ENGINE}(modules/|adapters/|engine\\.ts$|index\\.ts$)` },
    },
    {
      name: 'engine-module-not-to-other-module',
      comment: 'modules/<x>/ never imports modules/<y>/: modules cooperate through functions and triggers, as workers do.',
      severity: 'error',
      from: { path: `${ENGINE}modules/([^/]+)/` },
      to: { path: `${ENGINE}modules/`, pathNot: `${ENGINE}modules/$1/` },
    },
    {
      name: 'engine-module-core-only-module-api-and-logger',
      comment: 'modules/ import from core/ only core/module-api.ts and core/logger.ts.',
      severity: 'error',
      from: { path: `${ENGINE}modules/` },
      to: { path: `${ENGINE}core/`, pathNot: `${ENGINE}core/(module-api|logger)\\.ts$` },
    },
    {
      name: 'engine-module-adapters-only-via-interface',
      comment: 'modules/ import adapters only through their interface file adapters/<capability>/types.ts, never an implementation.',
      severity: 'error',
      from: { path: `${ENGINE}modules/` },
      to: { path: `${ENGINE}adapters/`, pathNot: `${ENGINE}adapters/[^/]+/types\\.ts$` },
    },
    {
      name: 'engine-module-not-to-config-or-root',
      comment: 'modules/ get their config slice through the module context; they never import config/, engine.ts or index.ts.',
      severity: 'error',
      from: { path: `${ENGINE}modules/` },
      to: { path: `${ENGINE}(config/|engine\\.ts$|index\\.ts$)` },
    },
    {
      name: 'engine-adapters-not-to-modules-or-root',
      comment: 'adapters/ are capabilities below the modules: they never import modules/, config/ or engine.ts.',
      severity: 'error',
      from: { path: `${ENGINE}adapters/` },
      to: { path: `${ENGINE}(modules/|config/|engine\\.ts$|index\\.ts$)` },
    },
    {
      name: 'engine-adapters-shared-is-a-leaf',
      comment:
        'adapters/shared/ is the infrastructure every adapter family uses (Redis connection, file helpers): it imports no adapter family, module, config/ or engine.ts, and from core/ only core/api/ and core/logger.ts.',
      severity: 'error',
      from: { path: `${ENGINE}adapters/shared/` },
      to: {
        path: [`${ENGINE}(modules/|config/|engine\\.ts$|index\\.ts$)`, `${ENGINE}adapters/`, `${ENGINE}core/`],
        pathNot: [`${ENGINE}adapters/shared/`, `${ENGINE}core/api/`, `${ENGINE}core/logger\\.ts$`],
      },
    },
    {
      name: 'engine-adapter-family-not-to-other-family',
      comment: 'adapters/<family>/ never imports adapters/<other family>/: what families share lives in adapters/shared/.',
      severity: 'error',
      from: { path: `${ENGINE}adapters/([^/]+)/`, pathNot: `${ENGINE}adapters/(shared|stream)/` },
      to: { path: `${ENGINE}adapters/[^/]+/`, pathNot: `${ENGINE}adapters/($1|shared)/` },
    },
    {
      name: 'engine-stream-adapters-build-on-kv-only',
      comment:
        "The one exception to the rule above: a stream store is a kv store (items) plus a fan-out of frames, so adapters/stream/ opens the kv family's stores; it imports no other family.",
      severity: 'error',
      from: { path: `${ENGINE}adapters/stream/` },
      to: { path: `${ENGINE}adapters/[^/]+/`, pathNot: `${ENGINE}adapters/(stream|kv|shared)/` },
    },

    {
      name: 'engine-lib-imports-no-module-or-adapter',
      comment: 'src/lib/ is shared code every module may import: it imports no module, no adapter (nor their interfaces), no config/ and not engine.ts.',
      severity: 'error',
      from: { path: `${ENGINE}lib/` },
      to: { path: `${ENGINE}(modules/|adapters/|config/|engine\\.ts$|index\\.ts$)` },
    },
    {
      name: 'engine-lib-core-only-module-api-and-logger',
      comment: 'src/lib/ sees core only as modules do: through core/module-api.ts (and its core/api/ types) and core/logger.ts.',
      severity: 'error',
      from: { path: `${ENGINE}lib/` },
      to: { path: `${ENGINE}core/`, pathNot: `${ENGINE}core/(module-api\\.ts|logger\\.ts|api/)` },
    },

    {
      name: 'engine-loads-server-clients-on-use',
      comment:
        'The clients of the servers an engine may use (ioredis, amqplib, nats) are imported with import() where a connection is opened, so that an engine which uses none of them never loads them (start-up time and memory). Elsewhere only `import type`.',
      severity: 'error',
      from: { path: ENGINE },
      to: { path: '(^|/)node_modules/(ioredis|amqplib|nats)/', dependencyTypesNot: ['type-only', 'dynamic-import'] },
    },

    // ---- general ----
    {
      name: 'no-circular',
      comment: 'No circular dependencies (type-only imports included, tsPreCompilationDeps is on).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        "An import that cannot be resolved: a typo, a missing dependency, a deep import blocked by 'exports', or a workspace package that is not built yet (run `npx tsc -b`).",
      severity: 'error',
      from: { path: '^packages/[^/]+/(src|test)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Analyse the TypeScript sources and tests, not the build output: of dist/ only the package entry
    // stays in the graph (as the target of `@flint/<name>` imports, never followed further).
    exclude: { path: '^packages/[^/]+/dist/(?!index\\.(js|d\\.ts)$)' },
    doNotFollow: { path: '(^|/)node_modules/|^packages/[^/]+/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // no 'types' condition: iii-sdk@0.11.6 maps it to a file it does not ship, which would make it unresolvable.
      conditionNames: ['import', 'node', 'default'],
      mainFields: ['types', 'module', 'main'],
      extensions: ['.ts', '.d.ts', '.mts', '.d.mts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
