import { DEFAULT_BRIDGE_URL } from '@flint/protocol';
import { type ConnectionProblem, FlintInvocationError, type Worker, registerWorker } from '@flint/sdk';

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

/**
 * Connects as an anonymous client (not listed as a worker) or fails fast when the engine is not there.
 * `token` (`--token`) is the bridge token; without it the SDK takes FLINT_TOKEN, then a `?token=` in the URL.
 */
export async function connect(url: string, token?: string, timeoutMs = 5000): Promise<Worker> {
  const worker = registerWorker(url, { announce: false, reconnect: { maxRetries: 0 }, log: quiet, token });
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(unreachable(worker, worker.connectionProblem, `no answer within ${timeoutMs} ms`)), timeoutMs);
      worker.once('failed', () => reject(unreachable(worker, worker.connectionProblem, 'the connection failed')));
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
function unreachable(worker: Worker, problem: ConnectionProblem | undefined, fallback: string): CliError {
  const url = worker.shownUrl;
  if (problem?.kind === 'not_a_bridge') return new CliError('not_connected', problem.message);
  if (problem?.kind === 'unauthorized') {
    const hint = problem.tokenSent
      ? "it refused the token: compare --token (or FLINT_TOKEN) with the engine's bridge.auth_token"
      : 'it needs a token: pass --token or set FLINT_TOKEN';
    return new CliError('unauthorized', `the engine at ${url} refused the connection (HTTP 401): ${hint}`);
  }
  if (problem?.kind === 'forbidden') return new CliError('origin_not_allowed', problem.message);
  if (problem?.kind === 'busy') return new CliError('too_many_connections', `${problem.message}; try again`);
  return new CliError('not_connected', `cannot reach the engine at ${url}: ${problem?.detail ?? fallback} (is it running? start it with: flint start)`);
}

/**
 * Runs `use` with a connected client for one module's functions, then disconnects. Engine errors become
 * one `code: message` line. `function_not_found` can only be about the function the CLI called (a
 * function that fails because a call it made found nothing fails with `invocation_failed`), so it means
 * the engine does not load the module.
 */
export async function withModule<T>(
  options: { url?: string; token?: string },
  module: { module: string; what: string },
  use: (w: Worker) => Promise<T>,
): Promise<T> {
  const worker = await connect(resolveUrl(options.url), options.token);
  try {
    return await use(worker);
  } catch (err) {
    if (err instanceof FlintInvocationError) {
      if (err.code === 'function_not_found')
        throw new CliError('function_not_found', `the engine has no ${module.what} loaded (add ${module.module} to its config)`);
      throw new CliError(err.code, err.message);
    }
    throw err;
  } finally {
    await worker.shutdown();
  }
}
