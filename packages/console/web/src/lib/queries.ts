import { useQuery } from '@tanstack/react-query';
import type {
  ClusterResponse,
  ConsoleConfig,
  ConsoleStatus,
  CronResponse,
  FunctionsResponse,
  QueuesResponse,
  StateGroupsResponse,
  TriggersResponse,
  WorkersResponse,
} from '../../../src/api-types.js';
import { api } from './api.js';
import { usePollWhenOffline } from './live.js';

/** Queries shared by several pages and the command palette; page-specific ones live with their page. */

export const useConsoleConfig = () =>
  useQuery({ queryKey: ['config'], queryFn: () => api.get<ConsoleConfig>('_console/config'), staleTime: Number.POSITIVE_INFINITY });

export function useStatus() {
  return useQuery({ queryKey: ['status'], queryFn: () => api.get<ConsoleStatus>('_console/status'), refetchInterval: 15_000 });
}

/**
 * How often cluster listings are refetched, pushed updates or not: the engine pushes other engines'
 * workers coming and going, but not their load (calls in flight) nor when each engine was last heard from.
 */
export const CLUSTER_POLL_MS = 5000;

/** Whether a worker listing comes from a cluster (every worker then carries `engine`). */
export const isClustered = (workers: readonly { engine?: string }[] | undefined): boolean => workers?.some((w) => w.engine !== undefined) === true;

export function useWorkers() {
  const poll = usePollWhenOffline();
  return useQuery({
    queryKey: ['workers'],
    queryFn: () => api.get<WorkersResponse>('_console/workers'),
    refetchInterval: (query) => (isClustered(query.state.data?.workers) ? CLUSTER_POLL_MS : poll),
  });
}

/** The cluster's engines (`engine::cluster::members`); asked only when `enabled` (the workers carry `engine`). */
export function useCluster(enabled: boolean) {
  return useQuery({
    queryKey: ['cluster'],
    queryFn: () => api.get<ClusterResponse>('_console/cluster'),
    enabled,
    refetchInterval: enabled ? CLUSTER_POLL_MS : false,
  });
}

/** The functions list query (shared by the hook and the Functions route's loader, which starts it before the page's code has loaded). */
export const functionsQuery = (includeInternal: boolean) => ({
  queryKey: ['functions', includeInternal],
  queryFn: () => api.get<FunctionsResponse>(`_console/functions?include_internal=${includeInternal}`),
});

export function useFunctions(includeInternal: boolean) {
  const poll = usePollWhenOffline();
  return useQuery({ ...functionsQuery(includeInternal), refetchInterval: poll });
}

export function useTriggers(includeInternal: boolean) {
  const poll = usePollWhenOffline();
  return useQuery({
    queryKey: ['triggers', includeInternal],
    queryFn: () => api.get<TriggersResponse>(`_console/triggers?include_internal=${includeInternal}`),
    refetchInterval: poll,
  });
}

export function useCron() {
  return useQuery({ queryKey: ['cron'], queryFn: () => api.get<CronResponse>('_console/cron'), refetchInterval: 30_000 });
}

export function useStateGroups() {
  const poll = usePollWhenOffline();
  return useQuery({ queryKey: ['state-groups'], queryFn: () => api.get<StateGroupsResponse>('_console/states'), refetchInterval: poll });
}

/** Queue depths change with every message, which is not pushed: polled every 2 s while shown. */
export function useQueues() {
  return useQuery({ queryKey: ['queues'], queryFn: () => api.get<QueuesResponse>('_console/queues'), refetchInterval: 2000 });
}
