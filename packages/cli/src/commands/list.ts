import { EngineFunctions, type FunctionInfo, type FunctionProviderInfo, type TriggerInfo, type WorkerInfo } from '@flint/sdk';
import { connect, resolveUrl } from '../client.js';
import { table, truncate } from '../table.js';

export interface ListOptions {
  json?: boolean;
  all?: boolean;
  url?: string;
  token?: string;
}

type Kind = 'functions' | 'triggers' | 'workers';

const FUNCTION_IDS: Record<Kind, string> = {
  functions: EngineFunctions.LIST_FUNCTIONS,
  triggers: EngineFunctions.LIST_TRIGGERS,
  workers: EngineFunctions.LIST_WORKERS,
};

/** Fetches a listing from the engine and renders it as a table (or JSON). */
export async function list(kind: Kind, options: ListOptions): Promise<string> {
  const worker = await connect(resolveUrl(options.url), options.token);
  let result: Record<string, unknown>;
  try {
    const payload = kind === 'workers' ? {} : { include_internal: options.all === true };
    result = (await worker.trigger({ function_id: FUNCTION_IDS[kind], payload })) as Record<string, unknown>;
  } finally {
    await worker.shutdown();
  }
  if (options.json) return JSON.stringify(result, null, 2);
  if (kind === 'functions') {
    const rows = (result.functions as FunctionInfo[]).sort((a, b) => a.function_id.localeCompare(b.function_id));
    return table(
      ['FUNCTION', 'PROVIDERS', 'DESCRIPTION', 'REQUEST FORMAT'],
      rows.map((f) => [
        f.function_id,
        providers(f.providers),
        truncate(f.description ?? ''),
        f.request_format ? truncate(JSON.stringify(f.request_format), 40) : '-',
      ]),
    );
  }
  if (kind === 'triggers') {
    const rows = result.triggers as TriggerInfo[];
    const clustered = rows.some((t) => t.engine !== undefined);
    return table(
      ['ID', 'TYPE', 'FUNCTION', 'STATUS', ...(clustered ? ['ENGINE'] : []), 'CONFIG'],
      rows.map((t) => [t.id, t.trigger_type, t.function_id, t.status, ...(clustered ? [t.engine ?? '-'] : []), truncate(JSON.stringify(t.config ?? {}), 50)]),
    );
  }
  const rows = result.workers as WorkerInfo[];
  // In a cluster every worker says which engine it is connected to.
  const clustered = rows.some((w) => w.engine !== undefined);
  return table(
    ['ID', 'NAME', 'RUNTIME', ...(clustered ? ['ENGINE'] : []), 'FUNCTIONS', 'IN FLIGHT', 'STATUS', 'CONNECTED'],
    rows.map((w) => [
      w.id,
      w.name ?? '-',
      `${w.runtime} ${w.version ?? ''}`.trim(),
      ...(clustered ? [w.engine ?? '-'] : []),
      String(w.function_count),
      String(w.active_invocations),
      w.status,
      new Date(w.connected_at_ms).toISOString(),
    ]),
  );
}

/**
 * Who serves a function, so that an unexpected provider stands out: workers by name and the start of
 * their id (`billing@1a2b3c4d`; a client that never announced itself shows only the id), modules by name.
 */
function providers(list: FunctionProviderInfo[] | undefined): string {
  if (!list || list.length === 0) return '-';
  return list.map((p) => ('module' in p ? p.module : `${p.worker_name ?? ''}@${p.worker_id.slice(0, 8)}${p.engine ? ` on ${p.engine}` : ''}`)).join(', ');
}
