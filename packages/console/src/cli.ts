import { Command, InvalidArgumentError, Option } from 'commander';
import { type ConsoleFlags, ConsoleOptionsError, resolveOptions } from './options.js';
import { type ConsoleServer, startConsole } from './server.js';
import { CONSOLE_VERSION } from './version.js';

const portNumber = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
};

/** The console's options as commander declares them (shared by `flint-console` and `flint console`). */
export function addConsoleOptions(command: Command): Command {
  return command
    .addOption(new Option('-p, --port <port>', 'console port (0 picks a free one)').argParser(portNumber).default(3113))
    .option('--host <host>', 'address to listen on; any other than loopback requires a token', '127.0.0.1')
    .option('--engine-host <host>', "the engine's address", '127.0.0.1')
    .addOption(new Option('--engine-port <port>', "the engine's HTTP port (flint-http)").argParser(portNumber).default(3111))
    .addOption(new Option('--ws-port <port>', "the engine's stream WebSocket port (flint-stream)").argParser(portNumber).default(3112))
    .addOption(new Option('--bridge-port <port>', "the engine's worker bridge port").argParser(portNumber).default(49134))
    .option('--bridge-url <url>', 'the full bridge URL, instead of --engine-host and --bridge-port (e.g. wss://… behind TLS)')
    .addOption(new Option('--token <token>', 'token every page and API call must present (required with a non-loopback --host)').env('FLINT_CONSOLE_TOKEN'))
    .addOption(new Option('--bridge-token <token>', "the engine's bridge token, when it has one").env('FLINT_TOKEN'))
    .addOption(new Option('--no-otel', "don't send the console's own spans to the engine (env OTEL_DISABLED=1)"))
    .addOption(new Option('--otel-service-name <name>', "service name of the console's own spans").env('OTEL_SERVICE_NAME').default('flint-console'))
    .addOption(new Option('--enable-flow', 'show the Flow page (env FLINT_ENABLE_FLOW=1)'));
}

/** Commander's parsed options → the console's flags (environment variables are read by resolveOptions). */
export function flagsOf(opts: Record<string, unknown>): ConsoleFlags {
  return {
    port: opts.port as number,
    host: opts.host as string,
    engineHost: opts.engineHost as string,
    enginePort: opts.enginePort as number,
    wsPort: opts.wsPort as number,
    bridgePort: opts.bridgePort as number,
    bridgeUrl: opts.bridgeUrl as string | undefined,
    token: opts.token as string | undefined,
    bridgeToken: opts.bridgeToken as string | undefined,
    noOtel: opts.otel === false,
    otelServiceName: opts.otelServiceName as string,
    enableFlow: opts.enableFlow === true ? true : undefined,
  };
}

/** Starts a console from flags, prints where it is and logs the engine connection; errors are one line on stderr. */
export async function runConsole(flags: ConsoleFlags): Promise<ConsoleServer | number> {
  let server: ConsoleServer;
  try {
    server = await startConsole(resolveOptions(flags));
  } catch (err) {
    const message = err instanceof ConsoleOptionsError ? err.message : `cannot start: ${(err as Error).message}`;
    process.stderr.write(`flint-console: ${message}\n`);
    return 1;
  }
  const bridge = server.link.worker.shownUrl;
  process.stdout.write(`Flint console ${CONSOLE_VERSION} on ${server.url} (engine bridge ${bridge})\n`);
  server.link.onEvent((e) => {
    if (e.type !== 'bridge') return;
    if (e.state === 'connected') process.stdout.write(`flint-console: connected to the engine at ${bridge}\n`);
    else process.stdout.write(`flint-console: the engine at ${bridge} is not reachable; retrying (pages show it as reconnecting)\n`);
  });
  return server;
}

/** `flint-console [options]`: resolves with the exit code once stopped by SIGINT/SIGTERM. */
export async function main(argv: string[]): Promise<number> {
  const program = addConsoleOptions(
    new Command('flint-console')
      .description("Flint's operator console: a web UI for the workers, functions, triggers, state and queues of a running engine")
      .version(CONSOLE_VERSION)
      .showHelpAfterError('(add --help for usage)'),
  );
  program.parse(argv);
  return serveConsole(flagsOf(program.opts()));
}

/** Runs a console until SIGINT/SIGTERM (`flint-console` and `flint console`); resolves with the exit code. */
export async function serveConsole(flags: ConsoleFlags): Promise<number> {
  const started = await runConsole(flags);
  if (typeof started === 'number') return started;
  return new Promise((resolve) => {
    const stop = () => {
      started.close().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
