import type { ClusterMember, ClusterResponse, WorkerInfo } from '../../../../src/api-types.js';

/** One engine's section of the Workers page in a cluster. */
export interface EngineGroup {
  /** The engine's `node_id`. */
  node: string;
  /** The engine the console is connected to. */
  self: boolean;
  /** What `engine::cluster::members` says of it (undefined when the list is not known or does not name it). */
  member: ClusterMember | undefined;
  /** Its workers that pass the filter, in the order given. */
  workers: WorkerInfo[];
  /** How many workers it has, filter or not. */
  total: number;
}

/**
 * The workers by engine (`WorkerInfo.engine`): the console's engine first, then the others by node id.
 * `all` is every worker, `shown` those the filter keeps (in display order). Every engine of the member
 * list gets a section, even without workers, unless `filtering` (then only engines with a match do).
 * Without a member list, the engines are those the workers name, in node id order.
 */
export function groupByEngine(
  all: readonly WorkerInfo[],
  shown: readonly WorkerInfo[],
  cluster: Pick<ClusterResponse, 'available' | 'node_id' | 'members'> | undefined,
  filtering: boolean,
): EngineGroup[] {
  const selfNode = cluster?.available ? (cluster.node_id ?? undefined) : undefined;
  // A worker without `engine` (not expected in a cluster) is counted with the console's engine.
  const nodeOf = (w: WorkerInfo) => w.engine ?? selfNode ?? '';
  const groups = new Map<string, EngineGroup>();
  const groupOf = (node: string): EngineGroup => {
    let g = groups.get(node);
    if (!g) {
      g = { node, self: node === selfNode, member: undefined, workers: [], total: 0 };
      groups.set(node, g);
    }
    return g;
  };
  if (cluster?.available) for (const m of cluster.members) groupOf(m.node).member = m;
  if (selfNode !== undefined) groupOf(selfNode);
  for (const w of all) groupOf(nodeOf(w)).total++;
  for (const w of shown) groupOf(nodeOf(w)).workers.push(w);
  return [...groups.values()].filter((g) => !filtering || g.workers.length > 0).sort((a, b) => Number(b.self) - Number(a.self) || a.node.localeCompare(b.node));
}

/** "under 1 s", "4 s", "3 min", "2 h": how long ago an engine was last heard from. */
export function heardAgo(ms: number): string {
  if (ms < 1000) return 'under 1 s';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h`;
}
