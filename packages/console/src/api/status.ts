import { connect } from 'node:net';
import type { ConsoleConfig, ConsoleStatus, EngineAbout, Reachability } from '../api-types.js';
import type { Route } from '../http/router.js';
import type { ConsoleOptions } from '../options.js';
import { CONSOLE_VERSION } from '../version.js';
import { engineHttpBase } from './http-probe.js';

const PROBE_MS = 2000;

/** Whether the engine's HTTP port answers HTTP (any status counts: the port is flint-http's). */
async function httpReachable(options: ConsoleOptions): Promise<Reachability> {
  const url = engineHttpBase(options).origin;
  try {
    const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(PROBE_MS) });
    return { url, reachable: true, detail: `HTTP ${res.status}` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return { url, reachable: false, detail: cause?.code ?? (err as Error).message };
  }
}

/** Whether the stream port accepts connections. */
function tcpReachable(host: string, port: number, url: string): Promise<Reachability> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (r: Reachability) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(PROBE_MS, () => done({ url, reachable: false, detail: 'no answer within 2 s' }));
    socket.once('connect', () => done({ url, reachable: true, detail: null }));
    socket.once('error', (err: NodeJS.ErrnoException) => done({ url, reachable: false, detail: err.code ?? err.message }));
  });
}

export function consoleConfig(options: ConsoleOptions, port: number, tokenRequired: boolean): ConsoleConfig {
  return {
    version: CONSOLE_VERSION,
    console: { host: options.host, port, token_required: tokenRequired },
    engine: {
      host: options.engineHost,
      http_port: options.enginePort,
      ws_port: options.wsPort,
      bridge_port: options.bridgePort,
      bridge_url: options.bridgeUrl,
    },
    otel: { enabled: options.otel, service_name: options.otelServiceName },
    enable_flow: options.enableFlow,
  };
}

/** GET /_console/status: connectivity to each of the engine's listeners and what the engine says about itself. */
export const statusRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/status',
    handler: async ({ link, options }): Promise<ConsoleStatus> => {
      const wsHost = options.engineHost.includes(':') ? `[${options.engineHost}]` : options.engineHost;
      const [http, stream, engine, health] = await Promise.all([
        httpReachable(options),
        tcpReachable(options.engineHost, options.wsPort, `ws://${wsHost}:${options.wsPort}`),
        link.bridgeState === 'connected' ? link.call<EngineAbout>('engine::config::get', {}).catch(() => null) : null,
        link.bridgeState === 'connected' ? link.callOptional('engine::health::check', {}).catch(() => undefined) : undefined,
      ]);
      return { bridge: link.bridgeState, http, stream, engine, health: health ?? null };
    },
  },
];
