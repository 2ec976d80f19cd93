import { FlintError } from '@flint/sdk';

/** An API answer other than success: the HTTP status and the stable `code` of the JSON error body. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly engineCode?: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiFailure(400, 'invalid_request', message);

/** The HTTP status for an engine function's failure seen by an API route (not by /_console/invoke, which reports it as a result). */
export function engineFailure(err: unknown): ApiFailure {
  if (err instanceof ApiFailure) return err;
  if (err instanceof FlintError) {
    const status =
      err.code === 'invalid_payload' || err.code.endsWith('_not_set')
        ? 400
        : err.code === 'function_not_found' || err.code.endsWith('_not_found')
          ? 404
          : err.code === 'invocation_timeout'
            ? 504
            : err.code === 'engine_unavailable' || err.code === 'engine_shutting_down'
              ? 503
              : 502;
    const code = status === 504 ? 'engine_timeout' : status === 503 ? 'engine_unavailable' : status === 502 ? 'engine_error' : err.code;
    return new ApiFailure(status, code, err.message, err.code);
  }
  return new ApiFailure(500, 'console_error', err instanceof Error ? err.message : String(err));
}
