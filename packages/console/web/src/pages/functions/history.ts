import { useCallback, useSyncExternalStore } from 'react';

/** One console invocation of a function, as the history under the Invoke panel shows it. */
export interface InvocationRecord {
  id: string;
  /** When it was sent (ms since the epoch). */
  at: number;
  input: unknown;
  /** `ok` / `error`: the function answered; `failed`: the console API refused or could not be reached. */
  outcome: 'ok' | 'error' | 'failed';
  duration_ms?: number;
  result?: unknown;
  error?: { code: string; message: string };
}

/** Calls kept per function. */
export const HISTORY_LIMIT = 20;
const PREFIX = 'flint-console:invocations:';
/** Larger inputs or outputs are kept in memory only, not in sessionStorage. */
const MAX_STORED_CHARS = 64_000;

const memory = new Map<string, InvocationRecord[]>();
const listeners = new Set<() => void>();
const EMPTY: InvocationRecord[] = [];

function read(functionId: string): InvocationRecord[] {
  const cached = memory.get(functionId);
  if (cached) return cached;
  let list: InvocationRecord[] = EMPTY;
  try {
    const raw = sessionStorage.getItem(PREFIX + functionId);
    if (raw) {
      const parsed: unknown = JSON.parse(raw);
      if (Array.isArray(parsed)) list = (parsed as InvocationRecord[]).filter((r) => r && typeof r.at === 'number' && typeof r.outcome === 'string');
    }
  } catch {
    // storage disabled or damaged: start empty
  }
  memory.set(functionId, list);
  return list;
}

const tooLarge = (v: unknown) => {
  try {
    return (JSON.stringify(v) ?? '').length > MAX_STORED_CHARS;
  } catch {
    return true;
  }
};

function persist(functionId: string, list: InvocationRecord[]) {
  const slim = list.map((r) => ({
    ...r,
    input: tooLarge(r.input) ? '(too large to keep across reloads)' : r.input,
    result: r.result !== undefined && tooLarge(r.result) ? '(too large to keep across reloads)' : r.result,
  }));
  try {
    if (list.length === 0) sessionStorage.removeItem(PREFIX + functionId);
    else sessionStorage.setItem(PREFIX + functionId, JSON.stringify(slim));
  } catch {
    // quota or private mode: the history lasts for this page only
  }
}

function write(functionId: string, list: InvocationRecord[]) {
  memory.set(functionId, list);
  persist(functionId, list);
  for (const l of listeners) l();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The last calls of one function (newest first), kept in memory and in sessionStorage. */
export function useInvocationHistory(functionId: string) {
  const list = useSyncExternalStore(
    subscribe,
    () => read(functionId),
    () => EMPTY,
  );
  const add = useCallback(
    (record: Omit<InvocationRecord, 'id'>) => {
      const entry: InvocationRecord = { ...record, id: `${record.at}-${Math.random().toString(36).slice(2, 8)}` };
      write(functionId, [entry, ...read(functionId)].slice(0, HISTORY_LIMIT));
      return entry;
    },
    [functionId],
  );
  const clear = useCallback(() => write(functionId, []), [functionId]);
  return { list, add, clear };
}
