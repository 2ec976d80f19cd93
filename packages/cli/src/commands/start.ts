import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type ConsoleServer, resolveOptions, startConsole } from '@flint/console';
import { ConfigError, type Engine, createEngine } from '@flint/engine';
import { CLI_VERSION } from '../version.js';

export interface StartOptions {
  config?: string;
  worker?: string[];
  /** Also start the operator console for this engine. */
  console?: boolean;
  consolePort?: number;
}

/** Starts the engine, prints the banner, runs `--worker` commands and shuts down on SIGINT/SIGTERM. */
export async function start(options: StartOptions): Promise<number> {
  let engine: Engine;
  try {
    engine = createEngine({ configPath: options.config });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`flint: invalid configuration\n${err.message}\n`);
      return 1;
    }
    throw err;
  }
  try {
    await engine.start();
  } catch (err) {
    process.stderr.write(`flint: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  // A bug must not take every worker's engine down with it: report it loudly and keep serving.
  process.on('unhandledRejection', (reason) => {
    engine.logger.error({ err: reason }, `unhandled rejection (a bug, please report it): ${reason instanceof Error ? reason.message : String(reason)}`);
  });

  const console = options.console ? await startEngineConsole(engine, options.consolePort) : undefined;
  const workers: ChildProcess[] = [];
  // The signal handlers are in place before the banner: a supervisor may send SIGTERM as soon as it sees it.
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) {
        process.stderr.write('flint: second signal, exiting now\n');
        process.exit(1);
      }
      stopping = true;
      engine.logger.info(`${signal} received: shutting down (stop accepting, fail in-flight calls, drain workers, flush stores)`);
      Promise.all([engine.stop(), ...workers.map(stopWorker), console?.close()]).then(
        ([report]) => {
          const held = report.holdups.map((h) => `${h.module} (${h.phase})`);
          if (held.length > 0) engine.logger.warn(`engine stopped; held up past shutdown_timeout_ms by: ${held.join(', ')}`);
          else engine.logger.info('engine stopped');
          resolve(0);
        },
        (err: unknown) => {
          process.stderr.write(`flint: shutdown failed: ${String(err)}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  printBanner(engine, console);
  for (const command of options.worker ?? []) workers.push(runWorker(command, engine));
  return stopped;
}

function printBanner(engine: Engine, console: ConsoleServer | undefined): void {
  const lines = [`Flint ${CLI_VERSION} engine is running`];
  for (const l of engine.listeners()) lines.push(`  ${l.name.padEnd(8)} ${l.url}`);
  if (console) lines.push(`  console  ${console.url}   <- open in a browser`);
  lines.push(`  modules  ${engine.moduleNames.length > 0 ? engine.moduleNames.join(', ') : '(none)'}`);
  lines.push(`  config   ${engine.config.configFile ?? 'embedded defaults (no flint-config.yaml found; in-memory storage)'}`);
  lines.push('Call a function: flint trigger --function-id <id> --payload <json>   Stop: Ctrl+C');
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Runs a worker command with FLINT_URL (and FLINT_TOKEN when the bridge has a token) pointing at this engine and prefixes its output. */
function runWorker(command: string, engine: Engine): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, FLINT_URL: engine.bridgeUrl };
  if (engine.bridgeToken !== undefined) env.FLINT_TOKEN = engine.bridgeToken;
  // Own process group, so that stopping reaches the worker and not only the shell running it.
  const child = spawn(command, { shell: true, detached: true, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const label = `[worker ${child.pid}]`;
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${label} ${line}\n`));
  }
  engine.logger.info(`started worker: ${command} (pid ${child.pid})`);
  child.on('exit', (code, signal) => {
    if (!stoppingWorkers.has(child)) engine.logger.warn(`worker "${command}" exited (${signal ?? `code ${code}`})`);
  });
  return child;
}

const stoppingWorkers = new WeakSet<ChildProcess>();

/** SIGTERM to the worker's process group; SIGKILL if it is still there after 5 s. */
function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  stoppingWorkers.add(child);
  const pid = child.pid;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  return new Promise((resolve) => {
    const timer = setTimeout(() => signal('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    signal('SIGTERM');
  });
}

/**
 * Starts the console in this process, pointed at this engine's actual listeners. A console that cannot
 * start (its port is taken) is reported and the engine runs on without it.
 */
async function startEngineConsole(engine: Engine, port: number | undefined): Promise<ConsoleServer | undefined> {
  const portOf = (name: string) => {
    const url = engine.listeners().find((l) => l.name === name)?.url;
    return url ? Number(new URL(url).port) : undefined;
  };
  const bridge = new URL(engine.bridgeUrl);
  try {
    return await startConsole(
      resolveOptions({
        port,
        engineHost: bridge.hostname.replace(/^\[|\]$/g, ''),
        bridgePort: Number(bridge.port),
        bridgeUrl: engine.bridgeUrl,
        bridgeToken: engine.bridgeToken,
        enginePort: portOf('http'),
        wsPort: portOf('stream'),
      }),
      { info: () => {}, debug: () => {}, warn: (m: string) => engine.logger.warn(`console: ${m}`), error: (m: string) => engine.logger.error(`console: ${m}`) },
    );
  } catch (err) {
    engine.logger.warn(`the console did not start: ${err instanceof Error ? err.message : String(err)} (set --console-port to another port)`);
    return undefined;
  }
}
