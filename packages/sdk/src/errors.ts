import { type ErrorBody, FlintError, isRoutingCode, nestedCallFailure, toErrorBody } from '@flint/protocol';

/** A failed `trigger()`: carries the engine's or the handler's stable `code`. */
export class FlintInvocationError extends FlintError {
  readonly function_id: string | undefined;

  constructor(code: string, message: string, functionId?: string, stacktrace?: string, cause?: ErrorBody) {
    super(code, message, { stacktrace, cause });
    this.name = 'FlintInvocationError';
    this.function_id = functionId;
  }

  /** The error of a failed call; a nested failure's `cause` becomes the error's `cause` (a FlintError). */
  static from(body: unknown, functionId?: string): FlintInvocationError {
    if (body && typeof body === 'object' && typeof (body as ErrorBody).code === 'string') {
      const b = body as ErrorBody;
      const cause = b.cause && typeof b.cause === 'object' && typeof b.cause.code === 'string' ? b.cause : undefined;
      if (b.code === FORBIDDEN) return new FlintForbiddenError(String(b.message ?? b.code), functionId);
      return new FlintInvocationError(b.code, String(b.message ?? b.code), functionId, b.stacktrace, cause);
    }
    return new FlintInvocationError('internal_error', typeof body === 'string' ? body : JSON.stringify(body), functionId);
  }
}

/** The code of a refusal by the access policy of the engine's listener (upstream's spelling). */
export const FORBIDDEN = 'FORBIDDEN';

/**
 * A call (or a function or trigger-type registration, reported through the worker's `engineError` event)
 * that the access policy of the listener this worker is connected to does not allow: the auth function's
 * lists, the listener's `expose_functions`, its middleware or a registration hook. `code` is `FORBIDDEN`.
 */
export class FlintForbiddenError extends FlintInvocationError {
  constructor(message: string, functionId?: string) {
    super(FORBIDDEN, message, functionId);
    this.name = 'FlintForbiddenError';
  }
}

/** A trigger the engine (or the owner of its type) refused. */
export class TriggerRegistrationError extends FlintError {
  constructor(
    code: string,
    message: string,
    readonly trigger_id: string,
    readonly trigger_type: string,
  ) {
    super(code, message);
    this.name = 'TriggerRegistrationError';
  }
}

/**
 * What a handler's failure becomes on the wire. A call the handler made that failed with a routing code
 * (the called function had no provider, timed out, …) is reported as the handler's `invocation_failed`
 * with that failure as its `cause`: its code describes the nested call, not this one. Any other error
 * keeps its code when it has one (`throw new FlintError('out_of_stock', …)`), else `invocation_failed`.
 */
export function handlerFailure(err: unknown, functionId: string): ErrorBody {
  if (err instanceof FlintInvocationError && isRoutingCode(err.code)) return nestedCallFailure(functionId, err.toBody(), err.function_id);
  return toErrorBody(err);
}
