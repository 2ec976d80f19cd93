import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, redirect } from '@tanstack/react-router';
import { Layout } from './components/Layout.js';
import { NotFound } from './components/NotFound.js';
import { functionsQuery } from './lib/queries.js';
import { validateFlowSearch } from './pages/flow/search.js';
import { validateLogsSearch } from './pages/logs/search.js';
import { validateStreamsSearch } from './pages/streams/search.js';
import { validateTracesSearch } from './pages/traces/search.js';

/** Search params are plain strings in the URL: every selection is a deep link. */
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const flag = (v: unknown): boolean | undefined => (v === true || v === 'true' ? true : undefined);

export type WorkersSearch = { worker?: string; q?: string };
export type FunctionsSearch = { fn?: string; q?: string; internal?: boolean };
export type TriggersSearch = { trigger?: string; q?: string; type?: string; internal?: boolean };
export type StatesSearch = { scope?: string; key?: string; q?: string };
export type QueuesSearch = { queue?: string; tab?: 'overview' | 'dead'; q?: string };

const rootRoute = createRootRouteWithContext<{ queryClient: QueryClient }>()({ component: Layout, notFoundComponent: NotFound });

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./pages/DashboardPage.js'), 'DashboardPage'),
});

const tracesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/traces',
  component: lazyRouteComponent(() => import('./pages/TracesPage.js'), 'TracesPage'),
  validateSearch: validateTracesSearch,
});

const logsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/logs',
  component: lazyRouteComponent(() => import('./pages/LogsPage.js'), 'LogsPage'),
  validateSearch: validateLogsSearch,
});

const streamsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/streams',
  component: lazyRouteComponent(() => import('./pages/StreamsPage.js'), 'StreamsPage'),
  validateSearch: validateStreamsSearch,
});

const flowRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/flow',
  component: lazyRouteComponent(() => import('./pages/FlowPage.js'), 'FlowPage'),
  validateSearch: validateFlowSearch,
});

/** Upstream's old address of the dead letters. */
const deadLetterRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/dead-letter',
  beforeLoad: () => {
    throw redirect({ to: '/queues' });
  },
});

const workersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workers',
  component: lazyRouteComponent(() => import('./pages/WorkersPage.js'), 'WorkersPage'),
  validateSearch: (s: Record<string, unknown>): WorkersSearch => ({ worker: str(s.worker), q: str(s.q) }),
});

const functionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/functions',
  component: lazyRouteComponent(() => import('./pages/FunctionsPage.js'), 'FunctionsPage'),
  validateSearch: (s: Record<string, unknown>): FunctionsSearch => ({ fn: str(s.fn), q: str(s.q), internal: flag(s.internal) }),
  // The list (it can be megabytes) is requested while the page's code loads, not after.
  loaderDeps: ({ search }) => ({ internal: search.internal === true }),
  loader: ({ context, deps }) => {
    void context.queryClient.prefetchQuery(functionsQuery(deps.internal));
  },
});

const triggersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/triggers',
  component: lazyRouteComponent(() => import('./pages/TriggersPage.js'), 'TriggersPage'),
  validateSearch: (s: Record<string, unknown>): TriggersSearch => ({ trigger: str(s.trigger), q: str(s.q), type: str(s.type), internal: flag(s.internal) }),
});

const statesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/states',
  component: lazyRouteComponent(() => import('./pages/StatesPage.js'), 'StatesPage'),
  validateSearch: (s: Record<string, unknown>): StatesSearch => ({ scope: str(s.scope), key: str(s.key), q: str(s.q) }),
});

const queuesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/queues',
  component: lazyRouteComponent(() => import('./pages/QueuesPage.js'), 'QueuesPage'),
  validateSearch: (s: Record<string, unknown>): QueuesSearch => ({
    queue: str(s.queue),
    tab: s.tab === 'dead' ? 'dead' : s.tab === 'overview' ? 'overview' : undefined,
    q: str(s.q),
  }),
});

const configRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/config',
  component: lazyRouteComponent(() => import('./pages/ConfigPage.js'), 'ConfigPage'),
});

const routeTree = rootRoute.addChildren([
  indexRoute,
  workersRoute,
  functionsRoute,
  triggersRoute,
  statesRoute,
  streamsRoute,
  queuesRoute,
  tracesRoute,
  logsRoute,
  flowRoute,
  configRoute,
  deadLetterRoute,
]);

/** The router; `queryClient` lets route loaders start their queries early. */
export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, context: { queryClient }, defaultPreload: 'intent', scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
