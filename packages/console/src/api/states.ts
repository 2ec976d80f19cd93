import type { StateEntriesResponse, StateGroupsResponse } from '../api-types.js';
import { badRequest } from '../http/failure.js';
import type { Route } from '../http/router.js';
import { queryInt } from './fields.js';

/** The States page: scopes with their counts, a scope's keys and values, and edits through flint-state's functions (so state triggers fire). */
export const stateRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/states',
    handler: async ({ link }): Promise<StateGroupsResponse> => {
      const { groups, counts } = await link.call<{ groups: string[]; counts?: Record<string, number> }>('state::list_groups', { counts: true });
      return { groups: groups.map((scope) => ({ scope, count: counts?.[scope] ?? 0 })) };
    },
  },
  {
    method: 'GET',
    path: '/_console/states/:scope',
    handler: async ({ link, params, query }): Promise<StateEntriesResponse> => {
      const payload: Record<string, unknown> = { scope: params.scope, offset: queryInt(query, 'offset', 0, 1e9), limit: queryInt(query, 'limit', 100, 1000) };
      const match = query.get('q');
      if (match) payload.match = match;
      const { entries, total } = await link.call<Omit<StateEntriesResponse, 'scope'>>('state::list_entries', payload);
      return { scope: params.scope as string, entries, total };
    },
  },
  {
    method: 'PUT',
    path: '/_console/states/:scope/:key',
    handler: async ({ link, params, body }) => {
      const b = await body();
      if (!('value' in b)) throw badRequest('value is required (any JSON value)');
      return link.call('state::set', { scope: params.scope, key: params.key, value: b.value });
    },
  },
  {
    method: 'DELETE',
    path: '/_console/states/:scope/:key',
    handler: ({ link, params }) => link.call('state::delete', { scope: params.scope, key: params.key }),
  },
];
