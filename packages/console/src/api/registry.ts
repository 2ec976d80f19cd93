import { EngineFunctions } from '@flint/sdk';
import type { ClusterResponse, CronJob, CronResponse, FunctionsResponse, TriggersResponse, WorkersResponse } from '../api-types.js';
import type { Route } from '../http/router.js';
import { queryFlag } from './fields.js';

/** Workers, functions, triggers, cron jobs and the cluster's engines: the engine's listings. */
export const registryRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/workers',
    handler: async ({ link }): Promise<WorkersResponse> => {
      const { workers } = await link.call<WorkersResponse>(EngineFunctions.LIST_WORKERS, {});
      return { workers };
    },
  },
  {
    method: 'GET',
    path: '/_console/functions',
    handler: ({ link, query }) => link.call<FunctionsResponse>(EngineFunctions.LIST_FUNCTIONS, { include_internal: queryFlag(query, 'include_internal') }),
  },
  {
    method: 'GET',
    path: '/_console/triggers',
    handler: async ({ link, query }): Promise<TriggersResponse> => {
      const include_internal = queryFlag(query, 'include_internal');
      const [{ triggers }, { trigger_types }] = await Promise.all([
        link.call<Pick<TriggersResponse, 'triggers'>>(EngineFunctions.LIST_TRIGGERS, { include_internal }),
        link.call<Pick<TriggersResponse, 'trigger_types'>>(EngineFunctions.LIST_TRIGGER_TYPES, { include_internal: true }),
      ]);
      return { triggers, trigger_types };
    },
  },
  {
    method: 'GET',
    path: '/_console/cron',
    handler: async ({ link }): Promise<CronResponse> => {
      const listing = await link.callOptional<{ triggers: CronJob[] }>('engine::cron::list', {});
      return { available: listing !== undefined, jobs: listing?.triggers ?? [] };
    },
  },
  {
    method: 'GET',
    path: '/_console/cluster',
    handler: async ({ link }): Promise<ClusterResponse> => {
      const answer = await link.callOptional<Omit<ClusterResponse, 'available'>>('engine::cluster::members', {});
      if (answer === undefined) return { available: false, cluster: null, node_id: null, members: [] };
      return { available: true, cluster: answer.cluster, node_id: answer.node_id, members: answer.members };
    },
  },
];
