import { addConsoleOptions, flagsOf, serveConsole } from '@flint/console';
import { Command, InvalidArgumentError } from 'commander';
import { CliError } from './client.js';
import { clusterShow } from './commands/cluster.js';
import { cronList, cronRun } from './commands/cron.js';
import { initCommand } from './commands/init.js';
import { list } from './commands/list.js';
import { dlqDiscard, dlqList, dlqRedrive, queues } from './commands/queues.js';
import { type StartOptions, start } from './commands/start.js';
import { streamsList } from './commands/streams.js';
import { tracesList, tracesShow } from './commands/traces.js';
import { trigger } from './commands/trigger.js';
import { CLI_VERSION } from './version.js';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer');
  return n;
};

const positivePort = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Runs the `flint` command line; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const report = (err: unknown) => {
    if (err instanceof CliError) process.stderr.write(`${err.code}: ${err.message}\n`);
    else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    exitCode = 1;
  };

  const program = new Command('flint')
    .description('Flint: a function-and-trigger engine. Without a command, `flint` starts the engine.')
    .version(CLI_VERSION)
    .showHelpAfterError('(add --help for usage)')
    // commander puts its suggestion on a line of its own; keep each error on one line.
    .configureOutput({ outputError: (text, write) => write(text.replace(/\n\(Did you mean (.+)\?\)/, " (did you mean '$1'?)")) });

  program
    .command('start')
    .description('start the engine with flint-config.yaml (or --config), or the embedded defaults')
    .option('-c, --config <path>', 'config file (default: ./flint-config.yaml when present)')
    .option('-w, --worker <command>', 'also run this worker command with FLINT_URL (and FLINT_TOKEN) set (repeatable)', collect)
    .option('--console', 'also start the operator console (flint-console) for this engine')
    .option('--console-port <port>', 'port of that console (default 3113)', positivePort)
    .action(async (opts: StartOptions) => {
      exitCode = await start(opts);
    });

  addConsoleOptions(program.command('console').description('start the operator console (a web UI) for a running engine; the same as flint-console')).action(
    async (opts: Record<string, unknown>) => {
      exitCode = await serveConsole(flagsOf(opts));
    },
  );

  program
    .command('trigger')
    .description('call a function and print its result as JSON')
    .requiredOption('-f, --function-id <id>', 'function to call, e.g. hello::world')
    .option('-p, --payload <json>', 'JSON payload (default: null)')
    .option('--void', 'fire and forget: do not wait for a result')
    .option('-t, --timeout-ms <n>', 'time-out for the call in milliseconds', positiveInt)
    .option('-u, --url <url>', 'bridge URL (default: $FLINT_URL or ws://127.0.0.1:49134)')
    .option('--token <token>', "the engine's bridge token (default: $FLINT_TOKEN)")
    .action(async (opts: { functionId: string; payload?: string; void?: boolean; timeoutMs?: number; url?: string; token?: string }) => {
      try {
        const result = await trigger(opts);
        if (!opts.void) process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);
      } catch (err) {
        report(err);
      }
    });

  for (const kind of ['functions', 'triggers', 'workers'] as const) {
    const cmd = program
      .command(kind)
      .description(`list registered ${kind}`)
      .option('--json', 'print the raw JSON answer')
      .option('-u, --url <url>', 'bridge URL (default: $FLINT_URL or ws://127.0.0.1:49134)')
      .option('--token <token>', "the engine's bridge token (default: $FLINT_TOKEN)");
    if (kind !== 'workers') cmd.option('-a, --all', `include internal engine ${kind}`);
    cmd.action(async (opts: { json?: boolean; all?: boolean; url?: string; token?: string }) => {
      try {
        process.stdout.write(`${await list(kind, opts)}\n`);
      } catch (err) {
        report(err);
      }
    });
  }

  const connection = (cmd: Command) =>
    cmd
      .option('--json', 'print the raw JSON answer')
      .option('-u, --url <url>', 'bridge URL (default: $FLINT_URL or ws://127.0.0.1:49134)')
      .option('--token <token>', "the engine's bridge token (default: $FLINT_TOKEN)");
  const print = async (work: () => Promise<string>) => {
    try {
      process.stdout.write(`${await work()}\n`);
    } catch (err) {
      report(err);
    }
  };

  connection(program.command('queues').description('list topics and named queues: waiting, in flight, delayed, dead, unrouted')).action((opts) =>
    print(() => queues(opts)),
  );

  const dlq = program.command('dlq').description("look after a topic's or named queue's dead letters");
  connection(dlq.command('list').argument('<topic>', 'topic or named queue').description('list dead letters, newest failure first'))
    .option('-l, --limit <n>', 'at most this many (default 50)', positiveInt)
    .action((topic: string, opts) => print(() => dlqList(topic, opts)));
  connection(
    dlq.command('redrive').argument('<topic>', 'topic or named queue').description("move dead letters (and a topic's unrouted messages) back to be handled"),
  ).action((topic: string, opts) => print(() => dlqRedrive(topic, opts)));
  connection(
    dlq
      .command('discard')
      .argument('<topic>', 'topic or named queue')
      .argument('<message-id>', 'the dead letter')
      .description('delete one dead letter for good'),
  ).action((topic: string, messageId: string, opts) => print(() => dlqDiscard(topic, messageId, opts)));

  const cron = program
    .command('cron')
    .description('list cron schedules with their next and last run; run one now (cron run)')
    .addHelpText('after', '\nWithout a command, flint cron lists (flint cron list): it takes --json, --url and --token.');
  connection(cron.command('list', { isDefault: true }).description('list cron triggers: expression, time zone, next run, last run and its outcome')).action(
    (opts) => print(() => cronList(opts)),
  );
  connection(
    cron
      .command('run')
      .argument('<trigger-id>', 'a cron trigger id (the TRIGGER column of flint cron)')
      .description("run a cron trigger's function now (its condition applies; lock and overlap do not) and print its result"),
  )
    .option('-t, --timeout-ms <n>', 'how long to wait for the run in milliseconds (default 30000)', positiveInt)
    .action((triggerId: string, opts) => print(() => cronRun(triggerId, opts)));

  connection(
    program.command('streams').description("list streams with their groups, and the stream listener's live counters (clients, subscriptions, frames sent)"),
  ).action((opts) => print(() => streamsList(opts)));

  connection(
    program.command('cluster').description('list the engines of the cluster (last heard from, link latency, workers, functions) and every worker by engine'),
  ).action((opts) => print(() => clusterShow(opts)));

  const traces = program
    .command('traces')
    .description('list recent traces; show one as a tree (traces show)')
    .addHelpText('after', '\nWithout a command, flint traces lists (flint traces list): it takes --limit, --name, --errors, --json, --url and --token.');
  connection(traces.command('list', { isDefault: true }).description('list the most recent traces (their root spans), newest first'))
    .option('-l, --limit <n>', 'at most this many (default 20)', positiveInt)
    .option('-n, --name <text>', 'only traces whose root span name contains this text')
    .option('-e, --errors', 'only traces whose root span failed')
    .action((opts) => print(() => tracesList(opts)));
  connection(
    traces
      .command('show')
      .argument('<trace-id>', 'a trace id (the TRACE ID column of flint traces)')
      .description('show one trace as a tree: each span under the one it ran in, with its service, duration and status'),
  ).action((traceId: string, opts) => print(() => tracesShow(traceId, opts)));

  program.addCommand(initCommand(report));

  program.exitOverride();
  try {
    await program.parseAsync(withDefaultCommand(argv));
  } catch (err) {
    const code = (err as { exitCode?: number }).exitCode;
    return typeof code === 'number' ? code : 1;
  }
  return exitCode;
}

/**
 * `flint` and `flint --config x` run `start`. (Not commander's default command: that takes every
 * unknown word as an argument of `start`, so `flint fucntions` could not be an unknown command.)
 */
function withDefaultCommand(argv: string[]): string[] {
  const first = argv[2];
  const rootOption = first === '-h' || first === '--help' || first === '-V' || first === '--version';
  return first === undefined || (first.startsWith('-') && !rootOption) ? [...argv.slice(0, 2), 'start', ...argv.slice(2)] : argv;
}
