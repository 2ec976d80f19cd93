import { DEFAULT_BRIDGE_URL } from '@flint/protocol';
import { type ConnectionProblem, type Worker, registerWorker } from '@flint/sdk';

/** Thrown for failures the CLI reports as one `code: message` line. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function resolveUrl(url: string | undefined): string {
  return url ?? process.env.FLINT_URL ?? DEFAULT_BRIDGE_URL;
}

const quiet = { warn: () => {}, error: () => {}, debug: () => {} };

/** Connects as an anonymous client (not listed as a worker) or fails fast when the engine is not there. */
export async function connect(url: string, timeoutMs = 5000): Promise<Worker> {
  const worker = registerWorker(url, { announce: false, reconnect: { maxRetries: 0 }, log: quiet });
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(unreachable(url, worker.connectionProblem, `no answer within ${timeoutMs} ms`)), timeoutMs);
      worker.once('failed', () => reject(unreachable(url, worker.connectionProblem, 'the connection failed')));
      worker.waitConnected().then(resolve);
    });
  } catch (err) {
    await worker.shutdown();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return worker;
}

/** The one line saying why the CLI could not connect: the SDK's own words for a server that is not a bridge. */
function unreachable(url: string, problem: ConnectionProblem | undefined, fallback: string): CliError {
  if (problem?.kind === 'not_a_bridge') return new CliError('not_connected', problem.message);
  return new CliError('not_connected', `cannot reach the engine at ${url}: ${problem?.detail ?? fallback} (is it running? start it with: flint start)`);
}
