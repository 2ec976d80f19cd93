import { type QueryClient, useQuery } from '@tanstack/react-query';
import type { StateEntriesResponse } from '../../../../src/api-types.js';
import { api, seg } from '../../lib/api.js';
import { usePollWhenOffline } from '../../lib/live.js';

/** Keys per page of the items pane. */
export const PAGE_SIZE = 100;

export type ValueType = 'null' | 'array' | 'object' | 'string' | 'number' | 'boolean';

/** The JSON type of a stored value. */
export function typeOf(value: unknown): ValueType {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
    case 'bigint':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      return 'object';
  }
}

/** The first 80 characters of a value's JSON. */
export function preview(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'null';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

const entriesPath = (scope: string, q: string, offset: number, limit = PAGE_SIZE) =>
  `_console/states/${seg(scope)}?q=${encodeURIComponent(q)}&offset=${offset}&limit=${limit}`;

/** One page of a scope's keys (sorted by the server; `q` filters keys by substring). */
export function useStateEntries(scope: string | undefined, q: string, offset: number) {
  const poll = usePollWhenOffline();
  return useQuery({
    queryKey: ['state-entries', scope, q, offset],
    queryFn: () => api.get<StateEntriesResponse>(entriesPath(scope ?? '', q, offset)),
    enabled: scope !== undefined,
    // While the next page or filter loads, the rows of the same scope stay (no flash of "empty").
    placeholderData: (prev, prevQuery) => (prevQuery?.queryKey[1] === scope ? prev : undefined),
    refetchInterval: poll,
  });
}

/** One key's entry when it is not on the page shown (a deep link): null when the scope has no such key. */
export function useStateKey(scope: string, key: string, enabled: boolean) {
  return useQuery({
    queryKey: ['state-entries', scope, 'key', key],
    queryFn: async () => {
      const res = await api.get<StateEntriesResponse>(entriesPath(scope, key, 0));
      return res.entries.find((e) => e.key === key) ?? null;
    },
    enabled,
  });
}

/** PUT a key's value. */
export const putState = (scope: string, key: string, value: unknown) =>
  api.put<{ old_value: unknown; new_value: unknown }>(`_console/states/${seg(scope)}/${seg(key)}`, { value });

/** DELETE a key. */
export const deleteState = (scope: string, key: string) => api.delete<{ old_value: unknown }>(`_console/states/${seg(scope)}/${seg(key)}`);

/** After a change: the scope list (counts) and the scope's pages. */
export async function invalidateState(queryClient: QueryClient, scope: string): Promise<void> {
  await Promise.all([queryClient.invalidateQueries({ queryKey: ['state-groups'] }), queryClient.invalidateQueries({ queryKey: ['state-entries', scope] })]);
}
