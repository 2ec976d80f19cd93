import { type ErrorBody, FlintError } from '@flint/protocol';

/** A failed `trigger()`: carries the engine's or the handler's stable `code`. */
export class FlintInvocationError extends FlintError {
  readonly function_id: string | undefined;

  constructor(code: string, message: string, functionId?: string, stacktrace?: string) {
    super(code, message, stacktrace === undefined ? undefined : { stacktrace });
    this.name = 'FlintInvocationError';
    this.function_id = functionId;
  }

  static from(body: unknown, functionId?: string): FlintInvocationError {
    if (body && typeof body === 'object' && typeof (body as ErrorBody).code === 'string') {
      const b = body as ErrorBody;
      return new FlintInvocationError(b.code, String(b.message ?? b.code), functionId, b.stacktrace);
    }
    return new FlintInvocationError('internal_error', typeof body === 'string' ? body : JSON.stringify(body), functionId);
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
