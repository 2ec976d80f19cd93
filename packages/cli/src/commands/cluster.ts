import type { ClusterMembers as Members, WorkerInfo } from '@flint/protocol';
import { CliError, withModule } from '../client.js';
import { table } from '../table.js';

export interface ClusterCommandOptions {
  json?: boolean;
  url?: string;
  token?: string;
}

/** `flint cluster`: the engines of the cluster with their link latency, then every worker by engine. */
export async function clusterShow(options: ClusterCommandOptions): Promise<string> {
  const { members, workers } = await withModule(options, { module: 'cluster', what: 'cluster' }, async (w) => {
    const m = (await w.trigger({ function_id: 'engine::cluster::members', payload: {} })) as Members;
    const list = (await w.trigger({ function_id: 'engine::workers::list', payload: {} })) as { workers: WorkerInfo[] };
    return { members: m, workers: list.workers };
  }).catch((err: unknown) => {
    if (err instanceof CliError && err.code === 'function_not_found') {
      throw new CliError('function_not_found', 'this engine is not in a cluster (set `cluster` in its flint-config.yaml; see docs/cluster.md)');
    }
    throw err;
  });
  if (options.json) return JSON.stringify({ ...members, workers }, null, 2);
  const rows = members.members.map((m) => [
    m.node === members.node_id ? `${m.node} (this engine)` : m.node,
    m.bridge || '-',
    m.version,
    new Date(m.started_at).toISOString(),
    m.node === members.node_id ? '-' : `${m.last_seen_ms} ms ago`,
    m.link_ms === null ? (m.node === members.node_id ? '-' : 'no answer') : `${m.link_ms.toFixed(2)} ms`,
    String(m.workers),
    String(m.functions),
  ]);
  const order = new Map(members.members.map((m, i) => [m.node, i]));
  const byEngine = [...workers].sort(
    (a, b) => (order.get(a.engine ?? '') ?? 99) - (order.get(b.engine ?? '') ?? 99) || (a.name ?? '').localeCompare(b.name ?? ''),
  );
  return [
    `cluster ${members.cluster}: ${members.members.length} engine${members.members.length === 1 ? '' : 's'}`,
    table(['ENGINE', 'BRIDGE', 'VERSION', 'STARTED', 'LAST HEARD', 'LINK', 'WORKERS', 'FUNCTIONS'], rows),
    '',
    table(
      ['ENGINE', 'WORKER', 'NAME', 'RUNTIME', 'FUNCTIONS'],
      byEngine.map((w) => [w.engine ?? '-', w.id, w.name ?? '-', `${w.runtime} ${w.version ?? ''}`.trim(), w.functions.join(', ') || '-']),
    ),
  ].join('\n');
}
