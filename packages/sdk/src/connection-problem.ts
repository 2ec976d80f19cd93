import { DEFAULT_BRIDGE_PORT } from '@flint/protocol';

/** Why the last attempt to connect to the engine failed. */
export interface ConnectionProblem {
  /**
   * `not_a_bridge`: a server answered, but over plain HTTP (e.g. the engine's HTTP port, or another
   * program); `unreachable`: the connection itself failed (nothing listens, DNS, network).
   */
  kind: 'not_a_bridge' | 'unreachable';
  /** The HTTP status the server answered with (`not_a_bridge`). */
  status?: number;
  /** The socket error code, e.g. `ECONNREFUSED` (`unreachable`). */
  errno?: string;
  /** One line naming the URL, e.g. `no Flint bridge at ws://127.0.0.1:3111 (HTTP 404) — …`. */
  message: string;
  /** The cause without the URL, e.g. `connection refused`. */
  detail: string;
}

const BRIDGE_HINT = `the bridge listens on ${DEFAULT_BRIDGE_PORT} by default`;

/** A server answered the WebSocket upgrade with a plain HTTP response. */
export function notABridge(url: string, status: number): ConnectionProblem {
  return {
    kind: 'not_a_bridge',
    status,
    message: `no Flint bridge at ${url} (HTTP ${status}) — ${BRIDGE_HINT}`,
    detail: `HTTP ${status}: not a Flint bridge — ${BRIDGE_HINT}`,
  };
}

/** The connection itself failed. */
export function unreachable(url: string, err: Error & { code?: string }): ConnectionProblem {
  const detail = err.code === 'ECONNREFUSED' ? 'connection refused' : err.message;
  return { kind: 'unreachable', errno: err.code, message: `cannot reach the engine at ${url} (${detail})`, detail };
}

/** Problems with the same key are the same situation (logged once): kind and HTTP status or error code. */
export function problemKey(problem: ConnectionProblem): string {
  return `${problem.kind}:${problem.status ?? problem.errno ?? problem.detail}`;
}
