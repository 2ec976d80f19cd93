import { DEFAULT_BRIDGE_PORT } from '@flint/protocol';

/** Why the last attempt to connect to the engine failed. */
export interface ConnectionProblem {
  /**
   * `not_a_bridge`: a server answered, but over plain HTTP (e.g. the engine's HTTP port, or another
   * program); `unauthorized`: the bridge wants a token and got none or a wrong one (HTTP 401);
   * `forbidden`: the bridge refused the connection's origin (HTTP 403); `busy`: the bridge is at its
   * connection cap (HTTP 503, `bridge.max_connections`); `unreachable`: the connection itself failed
   * (nothing listens, DNS, network).
   */
  kind: 'not_a_bridge' | 'unauthorized' | 'forbidden' | 'busy' | 'unreachable';
  /** The HTTP status the server answered with (`not_a_bridge`). */
  status?: number;
  /** The socket error code, e.g. `ECONNREFUSED` (`unreachable`). */
  errno?: string;
  /** `unauthorized`: whether the refused upgrade carried a token (so it was the wrong one). */
  tokenSent?: boolean;
  /** One line naming the URL, e.g. `no Flint bridge at ws://127.0.0.1:3111 (HTTP 404) — …`. */
  message: string;
  /** The cause without the URL, e.g. `connection refused`. */
  detail: string;
}

const BRIDGE_HINT = `the bridge listens on ${DEFAULT_BRIDGE_PORT} by default`;

/** The `{code, error}` of an engine's refusal body, when the body is one. */
export function refusalOf(body: string): { code: string; error: string } | undefined {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; error?: unknown };
    return typeof parsed.code === 'string' ? { code: parsed.code, error: typeof parsed.error === 'string' ? parsed.error : '' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A server answered the WebSocket upgrade with a plain HTTP response; `sentToken`: the upgrade carried a
 * token; `refusal`: the engine's `{code, error}` body, when it sent one.
 */
export function refused(url: string, status: number, sentToken: boolean, refusal?: { code: string; error: string }): ConnectionProblem {
  const code = refusal?.code;
  if (code === 'connection_unauthorized' || code === 'connection_forbidden' || code === 'auth_unavailable') {
    const what = code === 'auth_unavailable' ? "the engine's auth function failed" : "the engine's auth function refused the connection";
    const detail = `HTTP ${status}: ${what}${refusal?.error ? `: ${refusal.error}` : ''}`;
    const kind = code === 'auth_unavailable' ? 'busy' : code === 'connection_forbidden' ? 'forbidden' : 'unauthorized';
    return { kind, status, tokenSent: sentToken, message: `the engine at ${url} refused the connection (${detail})`, detail };
  }
  if (status === 401) {
    const detail = sentToken
      ? "HTTP 401: the engine refused the token — compare the token option (or FLINT_TOKEN) with the engine's bridge.auth_token"
      : 'HTTP 401: the engine needs a token — pass the token option or set FLINT_TOKEN';
    return { kind: 'unauthorized', status, tokenSent: sentToken, message: `the engine at ${url} refused the connection (${detail})`, detail };
  }
  if (status === 403) {
    const detail = "HTTP 403: the connection's origin is not in the engine's bridge.allowed_origins";
    return { kind: 'forbidden', status, message: `the engine at ${url} refused the connection (${detail})`, detail };
  }
  if (status === 503) {
    const detail = 'HTTP 503: the engine serves as many connections as it allows (bridge.max_connections)';
    return { kind: 'busy', status, message: `the engine at ${url} refused the connection for now (${detail})`, detail };
  }
  return notABridge(url, status);
}

function notABridge(url: string, status: number): ConnectionProblem {
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

/** `url` as it may be shown: the value of a `token` query parameter is replaced by `***`. */
export function shownUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1***');
}
