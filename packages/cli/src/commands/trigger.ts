import { functionIdError } from '@flint/protocol';
import { FlintInvocationError, TriggerAction } from '@flint/sdk';
import { CliError, connect, resolveUrl } from '../client.js';

export interface TriggerOptions {
  functionId: string;
  payload?: string;
  void?: boolean;
  timeoutMs?: number;
  url?: string;
  token?: string;
}

/** Calls one function and prints its result as JSON on stdout. */
export async function trigger(options: TriggerOptions): Promise<unknown> {
  // The engine's rule, checked before connecting: a bad id is reported even when no engine runs.
  const badId = functionIdError(options.functionId);
  if (badId) throw new CliError('invalid_function_id', badId);
  let payload: unknown = null;
  if (options.payload !== undefined) {
    try {
      payload = JSON.parse(options.payload);
    } catch (err) {
      throw new CliError('invalid_payload', `--payload is not valid JSON (${(err as Error).message})`);
    }
  }
  const worker = await connect(resolveUrl(options.url), options.token);
  try {
    if (options.void) {
      await worker.trigger({ function_id: options.functionId, payload, action: TriggerAction.Void() });
      return undefined;
    }
    return await worker.trigger({ function_id: options.functionId, payload, timeoutMs: options.timeoutMs });
  } catch (err) {
    if (err instanceof FlintInvocationError) throw new CliError(err.code, err.message);
    throw err;
  } finally {
    await worker.shutdown();
  }
}
