import type { StreamEntry, StreamKind, StreamStats, StreamsResponse } from '../api-types.js';
import type { Route } from '../http/router.js';

/** The line of `engine::streams::stats` that sums the streams past the first 1,000 (not a stream). */
const OTHER = '(other)';

/**
 * Whether a stream is the engine's own: `flint:` is the prefix the engine reserves (workers may not write
 * there), and `flint.`/`flint-`/`flint_`, `engine:`/`engine.`/`engine-`/`engine_` and `__` are taken as
 * internal too. Every other name is a user stream.
 */
export function streamKind(name: string): StreamKind {
  return /^(?:flint[:.\-_]|engine[:.\-_]|__)/i.test(name) ? 'system' : 'user';
}

/** The Streams page, through flint-stream's `stream::list_all` and `engine::streams::stats`. */
export const streamsRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/streams',
    handler: async ({ link }): Promise<StreamsResponse> => {
      const [listed, stats] = await Promise.all([
        link.callOptional<{ stream: { id: string; groups: string[] }[] }>('stream::list_all', {}),
        link.callOptional<StreamStats>('engine::streams::stats', {}),
      ]);
      if (listed === undefined) return { available: false, streams: [], stats: null };
      const byName = new Map<string, StreamEntry>();
      for (const s of listed.stream) byName.set(s.id, { name: s.id, groups: [...s.groups], type: streamKind(s.id) });
      for (const line of stats?.streams ?? []) {
        if (line.name === OTHER) continue;
        const { name, ...counters } = line;
        const entry = byName.get(name) ?? { name, groups: [], type: streamKind(name) };
        entry.stats = counters;
        byName.set(name, entry);
      }
      const streams = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { available: true, streams, stats: stats ?? null };
    },
  },
];
