import type { WorkerInfo } from '@flint/protocol';
import type { WorkerMetadata } from './api/registry.js';
import type { WorkerConnection } from './bridge/connection.js';
import type { RegistryEvents } from './events.js';

/** The connected workers, by worker id. */
export class WorkerRegistry {
  private readonly connections = new Map<string, WorkerConnection>();
  private readonly byReattachToken = new Map<string, WorkerConnection>();

  constructor(private readonly events: RegistryEvents) {}

  get size(): number {
    return this.connections.size;
  }

  values(): IterableIterator<WorkerConnection> {
    return this.connections.values();
  }

  get(id: string): WorkerConnection | undefined {
    return this.connections.get(id);
  }

  /** The live connection whose reattach token this is, if any. */
  byToken(token: string): WorkerConnection | undefined {
    const conn = this.byReattachToken.get(token);
    return conn?.live ? conn : undefined;
  }

  add(conn: WorkerConnection): void {
    this.connections.set(conn.id, conn);
    this.byReattachToken.set(conn.reattachToken, conn);
    this.events.emit(() => ({ type: 'worker_connected', worker_id: conn.id }));
  }

  /** Forgets a connection's reattach token (it closed, or a successor used it). */
  retireToken(conn: WorkerConnection): void {
    if (this.byReattachToken.get(conn.reattachToken) === conn) this.byReattachToken.delete(conn.reattachToken);
  }

  remove(conn: WorkerConnection): void {
    this.retireToken(conn);
    if (this.connections.get(conn.id) === conn) this.connections.delete(conn.id);
    this.events.emit(() => ({ type: 'worker_disconnected', worker_id: conn.id }));
  }

  describe(id: string, metadata: WorkerMetadata): boolean {
    const conn = this.connections.get(id);
    if (!conn) return false;
    conn.metadata = metadata;
    this.events.emit(() => ({ type: 'worker_metadata_updated', worker_id: id }));
    return true;
  }

  /** Workers sorted by name then id; connections that never announced themselves (CLIs, raw sockets) only when asked for. */
  list(includeAnonymous = false): WorkerInfo[] {
    const rows: WorkerInfo[] = [];
    for (const conn of this.connections.values()) if (includeAnonymous || conn.metadata !== undefined) rows.push(workerInfo(conn));
    return rows.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.id.localeCompare(b.id));
  }

  info(id: string): WorkerInfo | undefined {
    const conn = this.connections.get(id);
    return conn && workerInfo(conn);
  }
}

function workerInfo(conn: WorkerConnection): WorkerInfo {
  const m = conn.metadata;
  const info: WorkerInfo = {
    id: conn.id,
    name: m?.name ?? null,
    runtime: m?.runtime ?? 'unknown',
    version: m?.version ?? null,
    os: m?.os ?? null,
    ip_address: conn.ipAddress,
    internal: false,
    status: m === undefined ? 'connected' : conn.executing > 0 ? 'busy' : 'available',
    connected_at_ms: conn.connectedAt,
    function_count: conn.functions.size,
    functions: [...conn.functions],
    active_invocations: conn.executing,
    latest_metrics: null,
  };
  if (m?.pid !== undefined) info.pid = m.pid;
  if (m?.isolation !== undefined) info.isolation = m.isolation;
  return info;
}
