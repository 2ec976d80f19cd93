import { createRootRoute, createRoute, createRouter, redirect } from '@tanstack/react-router';
import { Layout } from './components/Layout.js';
import { NotFound } from './components/NotFound.js';
import { ConfigPage } from './pages/ConfigPage.js';
import { FunctionsPage } from './pages/FunctionsPage.js';
import { QueuesPage } from './pages/QueuesPage.js';
import { StatesPage } from './pages/StatesPage.js';
import { TriggersPage } from './pages/TriggersPage.js';
import { WorkersPage } from './pages/WorkersPage.js';

/** Search params are plain strings in the URL: every selection is a deep link. */
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const flag = (v: unknown): boolean | undefined => (v === true || v === 'true' ? true : undefined);

export type WorkersSearch = { worker?: string; q?: string };
export type FunctionsSearch = { fn?: string; q?: string; internal?: boolean };
export type TriggersSearch = { trigger?: string; q?: string; type?: string; internal?: boolean };
export type StatesSearch = { scope?: string; key?: string; q?: string };
export type QueuesSearch = { queue?: string; tab?: 'overview' | 'dead'; q?: string };

const rootRoute = createRootRoute({ component: Layout, notFoundComponent: NotFound });

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/workers' });
  },
});

const workersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workers',
  component: WorkersPage,
  validateSearch: (s: Record<string, unknown>): WorkersSearch => ({ worker: str(s.worker), q: str(s.q) }),
});

const functionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/functions',
  component: FunctionsPage,
  validateSearch: (s: Record<string, unknown>): FunctionsSearch => ({ fn: str(s.fn), q: str(s.q), internal: flag(s.internal) }),
});

const triggersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/triggers',
  component: TriggersPage,
  validateSearch: (s: Record<string, unknown>): TriggersSearch => ({ trigger: str(s.trigger), q: str(s.q), type: str(s.type), internal: flag(s.internal) }),
});

const statesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/states',
  component: StatesPage,
  validateSearch: (s: Record<string, unknown>): StatesSearch => ({ scope: str(s.scope), key: str(s.key), q: str(s.q) }),
});

const queuesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/queues',
  component: QueuesPage,
  validateSearch: (s: Record<string, unknown>): QueuesSearch => ({
    queue: str(s.queue),
    tab: s.tab === 'dead' ? 'dead' : s.tab === 'overview' ? 'overview' : undefined,
    q: str(s.q),
  }),
});

const configRoute = createRoute({ getParentRoute: () => rootRoute, path: '/config', component: ConfigPage });

const routeTree = rootRoute.addChildren([indexRoute, workersRoute, functionsRoute, triggersRoute, statesRoute, queuesRoute, configRoute]);

export const router = createRouter({ routeTree, defaultPreload: 'intent', scrollRestoration: true });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
