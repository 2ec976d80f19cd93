import { useQuery } from '@tanstack/react-query';
import type {
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

export function useWorkers() {
  const poll = usePollWhenOffline();
  return useQuery({ queryKey: ['workers'], queryFn: () => api.get<WorkersResponse>('_console/workers'), refetchInterval: poll });
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
