import { isIP } from 'node:net';

/** Everything the console runs with: the spec's flags and environment variables, plus the token. */
export interface ConsoleOptions {
  /** Console port (`--port`, `-p`); 0 picks a free one. */
  port: number;
  /** Bind address (`--host`); anything but loopback requires `token`. */
  host: string;
  engineHost: string;
  /** The engine's HTTP port (flint-http), for the request builder and the Config page. */
  enginePort: number;
  /** The engine's stream WebSocket port (flint-stream), proxied for the Streams page. */
  wsPort: number;
  bridgePort: number;
  /** The bridge URL; default `ws://<engineHost>:<bridgePort>`. */
  bridgeUrl: string;
  /** The engine's bridge token (`FLINT_TOKEN`), when the bridge requires one. */
  bridgeToken: string | undefined;
  /** The console's own token (`--token` / `FLINT_CONSOLE_TOKEN`): every API call and WebSocket must present it. */
  token: string | undefined;
  otel: boolean;
  otelServiceName: string;
  enableFlow: boolean;
  /** Folder of the built web app (default: the one shipped in the package). */
  webRoot?: string;
}

export type ConsoleFlags = Partial<Omit<ConsoleOptions, 'bridgeUrl'>> & { bridgeUrl?: string; noOtel?: boolean };

/** A value that turns a switch on in an environment variable (`1`, `true`, `yes`, `on`). */
export const truthy = (v: string | undefined): boolean => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
}

/** Problems with a set of options, each a sentence for the user; empty when they are usable. */
export class ConsoleOptionsError extends Error {}

/** Fills in the defaults of the spec's table (flags win over environment variables) and checks them. */
export function resolveOptions(flags: ConsoleFlags, env: NodeJS.ProcessEnv = process.env): ConsoleOptions {
  const engineHost = flags.engineHost ?? '127.0.0.1';
  const bridgePort = flags.bridgePort ?? 49134;
  const urlHost = isIP(engineHost) === 6 ? `[${engineHost}]` : engineHost;
  const options: ConsoleOptions = {
    port: flags.port ?? 3113,
    host: flags.host ?? '127.0.0.1',
    engineHost,
    enginePort: flags.enginePort ?? 3111,
    wsPort: flags.wsPort ?? 3112,
    bridgePort,
    bridgeUrl: flags.bridgeUrl ?? `ws://${urlHost}:${bridgePort}`,
    bridgeToken: flags.bridgeToken ?? (env.FLINT_TOKEN || undefined),
    token: flags.token ?? (env.FLINT_CONSOLE_TOKEN || undefined),
    otel: flags.noOtel === true || flags.otel === false ? false : !truthy(env.OTEL_DISABLED),
    otelServiceName: flags.otelServiceName ?? (env.OTEL_SERVICE_NAME || 'flint-console'),
    enableFlow: flags.enableFlow === true || truthy(env.FLINT_ENABLE_FLOW),
    webRoot: flags.webRoot,
  };
  for (const [name, port] of [
    ['--port', options.port],
    ['--engine-port', options.enginePort],
    ['--ws-port', options.wsPort],
    ['--bridge-port', options.bridgePort],
  ] as const) {
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConsoleOptionsError(`${name} must be a port number from 0 to 65535 (got ${port})`);
  }
  if (options.token !== undefined && options.token.length < 16) {
    throw new ConsoleOptionsError('the console token must be at least 16 characters (e.g. `openssl rand -hex 24`)');
  }
  if (!isLoopback(options.host) && options.token === undefined) {
    throw new ConsoleOptionsError(
      `refusing to listen on ${options.host} without a token: anyone who reaches it could call any function. ` +
        'Set --token or FLINT_CONSOLE_TOKEN (e.g. FLINT_CONSOLE_TOKEN=$(openssl rand -hex 24)), or keep --host 127.0.0.1',
    );
  }
  return options;
}
