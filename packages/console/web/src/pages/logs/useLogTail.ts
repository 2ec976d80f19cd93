import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useRef } from 'react';
import type { LogsResponse, LogsUnavailableReason } from '../../../../src/api-types.js';
import { api } from '../../lib/api.js';
import { LOOKBACK_MS, type LogFilters, type LogLine, MAX_LINES, PAGE_SIZE, mergeNewer, mergeOlder, requestOf, windowOf } from './model.js';

/** How often the tail asks for new lines. */
export const TAIL_INTERVAL_MS = 2000;

export interface TailData {
  available: boolean;
  reason?: LogsUnavailableReason;
  detail?: string;
  /** Newest first. */
  lines: LogLine[];
  /** The next line id. */
  nextId: number;
  /** Lines with an id from `freshFrom` up to (not including) `freshTo` arrived at the top with the last poll (they are highlighted). */
  freshFrom: number;
  freshTo: number;
  /** More lines match beyond the oldest one held (within the range). */
  olderAvailable: boolean;
  /** When the last poll was answered. */
  updatedAt: number;
}

const post = (body: unknown) => api.post<LogsResponse>('_console/logs', body);

const unavailable = (res: LogsResponse, now: number): TailData => ({
  available: false,
  reason: res.reason,
  detail: res.detail,
  lines: [],
  nextId: 1,
  freshFrom: 1,
  freshTo: 1,
  olderAvailable: false,
  updatedAt: now,
});

/**
 * One poll of the tail: the first one loads the newest page of lines in the range; the next ones ask
 * only for lines from a little before the newest held (LOOKBACK_MS) and merge the new ones in at the
 * top. Lines that leave a moving range (the last 15 minutes…) are dropped, and at most MAX_LINES kept.
 * When more lines arrived than one page holds, the tail starts again from the newest page.
 */
async function poll(filters: LogFilters, prev: TailData | undefined, older: boolean): Promise<TailData> {
  const now = Date.now();
  const { start, end } = windowOf(filters, now);
  let held = prev?.available ? prev.lines : [];
  const nextId = prev?.nextId ?? 1;
  if (start !== undefined && held.length > 0 && (held.at(-1)?.ms ?? 0) < start) held = held.filter((l) => l.ms >= start);

  const newest = held[0];
  let lines: LogLine[];
  let id: number;
  let olderAvailable: boolean;
  let freshFrom: number;
  if (newest === undefined) {
    const res = await post(requestOf(filters, start, end));
    if (!res.available) return unavailable(res, now);
    ({ lines, nextId: id } = mergeNewer([], res.logs, Number.NEGATIVE_INFINITY, nextId));
    olderAvailable = res.total > res.logs.length;
    // The first load is not "new"; lines that show up in an empty view later are.
    freshFrom = prev?.available ? nextId : id;
  } else {
    const since = Math.max(start ?? 0, newest.ms - LOOKBACK_MS);
    const res = await post(requestOf(filters, since, end));
    if (!res.available) return unavailable(res, now);
    const merged = mergeNewer(held, res.logs, since, nextId);
    if (merged.matched === 0 && res.total > res.logs.length) {
      // More new lines than a page, none of them held: restart from the newest page rather than leave a hole.
      ({ lines, nextId: id } = mergeNewer([], res.logs, Number.NEGATIVE_INFINITY, nextId));
      olderAvailable = true;
    } else {
      ({ lines, nextId: id } = merged);
      olderAvailable = prev?.olderAvailable ?? false;
    }
    freshFrom = nextId;
  }

  const freshTo = id;
  const oldest = lines.at(-1);
  if (older && oldest !== undefined && lines.length < MAX_LINES) {
    const res = await post(requestOf(filters, start, oldest.ms, PAGE_SIZE));
    if (res.available) {
      ({ lines, nextId: id } = mergeOlder(lines, res.logs, id));
      olderAvailable = res.total > res.logs.length;
    }
  }
  if (lines.length > MAX_LINES) {
    lines = lines.slice(0, MAX_LINES);
    olderAvailable = true;
  }
  return { available: true, lines, nextId: id, freshFrom, freshTo, olderAvailable, updatedAt: now };
}

/** A stable key for a set of filters. */
const keyOf = (f: LogFilters) => JSON.stringify([f.severity, f.range, f.from, f.to, f.text, f.trace_id, f.span_id]);

/**
 * The live tail of the lines matching `filters`: polled every 2 s (not while `paused`, nor while the
 * tab is hidden), newest first. `loadOlder` adds the page of lines before the oldest one held.
 */
export function useLogTail(filters: LogFilters, paused: boolean) {
  const queryClient = useQueryClient();
  const queryKey = ['logs-tail', keyOf(filters)];
  const wantOlder = useRef(false);
  const query = useQuery({
    queryKey,
    queryFn: () => {
      const older = wantOlder.current;
      wantOlder.current = false;
      return poll(filters, queryClient.getQueryData<TailData>(queryKey), older);
    },
    // Paused: the list stays as it is (no interval, no refetch on focus); Load older still works.
    enabled: !paused,
    refetchInterval: TAIL_INTERVAL_MS,
    refetchOnWindowFocus: !paused,
    // The lines are merged by the poll itself; comparing thousands of records each time would be waste.
    structuralSharing: false,
    retry: 1,
    gcTime: 60_000,
  });
  const refetch = query.refetch;
  const loadOlder = useCallback(() => {
    wantOlder.current = true;
    void refetch();
  }, [refetch]);
  return { ...query, loadOlder };
}
