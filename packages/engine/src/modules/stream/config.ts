import { z } from 'zod';
import { adapterRef } from '../../lib/adapter-ref.js';
import { host, port, positiveInt } from '../../lib/config-fields.js';

export const streamConfigSchema = z.strictObject({
  host: host(),
  port: port(3112),
  /**
   * Called on every WebSocket upgrade with `{headers, path, query_params, addr}`: `{allow: false, status?,
   * reason?}` refuses it (401 by default, or 403), `{context}` attaches a context to the connection.
   */
  auth_function: z.string().min(1).optional(),
  /** Time the auth function has; an upgrade it does not answer in time is refused (503). */
  auth_timeout_ms: positiveInt(5_000),
  /** A `stream` adapter: `{name: kv, config: {store_method: in_memory | file_based, …}}` or `{name: redis, config: {…}}`. */
  adapter: adapterRef({ name: 'kv', config: { store_method: 'in_memory' } }),
  /** A connection whose unsent frames exceed this is closed with 1013 (it cannot keep up). */
  max_buffered_bytes: positiveInt(4 * 1024 * 1024),
  /** A client frame larger than this closes its connection with 1009 (joins and leaves are small). */
  max_frame_bytes: positiveInt(64 * 1024),
  /** Subscriptions one connection may hold; a join beyond it is refused with an `unauthorized` frame and logged. */
  max_subscriptions_per_connection: positiveInt(1_000),
  /** Largest item value (as JSON) that set/update accept, and largest custom event data of send. */
  max_value_bytes: positiveInt(1024 * 1024),
  /** Connections served at once; one more upgrade is answered 503 too_many_connections. */
  max_connections: positiveInt(4096),
  /** Clients are pinged this often and dropped when they did not answer the previous ping. */
  ping_interval_ms: positiveInt(30_000),
  /** Time a connection has to send its upgrade request. */
  headers_timeout_ms: positiveInt(10_000),
});

export type StreamConfig = z.output<typeof streamConfigSchema>;
