import type { ServerResponse } from 'node:http';
import type { AttributeValue, TraceContext, TriggerFiring } from '../../core/module-api.js';

/** `http.response.status_code` alone, one frozen object per status (tracers keep it with the span: no object is made per request). */
function statusAttributes(status: number): Readonly<Record<string, AttributeValue>> {
  let attributes = STATUS_ATTRIBUTES[status];
  if (attributes === undefined) {
    attributes = Object.freeze({ 'http.response.status_code': status });
    if (Number.isInteger(status) && status >= 100 && status < 600) STATUS_ATTRIBUTES[status] = attributes;
  }
  return attributes;
}

const STATUS_ATTRIBUTES: Readonly<Record<string, AttributeValue>>[] = [];

/**
 * A firing whose end waits for the answer to be sent (or the connection to close), so that it carries the
 * status. Its 'close' listener also runs the request's `cleanup` (set by HttpPipeline.invokeHandler): one
 * listener per response rather than two, which an EventEmitter keeps in an array and copies on every emit.
 */
export class AnsweredFiring implements TriggerFiring {
  readonly observed = true;
  readonly trace: TraceContext;
  /** Run when the response closes, once the firing has ended. */
  cleanup: (() => void) | undefined = undefined;
  private outcome: Parameters<TriggerFiring['end']>[0] = undefined;

  constructor(
    private readonly firing: TriggerFiring,
    res: ServerResponse,
  ) {
    this.trace = firing.trace;
    // 'close' comes once, answered or not: `on` spares the wrapper and the removal `once` would cost.
    res.on('close', () => this.closed(res.statusCode));
  }

  end(o?: Parameters<TriggerFiring['end']>[0]): void {
    this.outcome ??= o ?? {};
  }

  private closed(status: number): void {
    const outcome = this.outcome;
    const attributes = outcome?.attributes ? { ...outcome.attributes, 'http.response.status_code': status } : statusAttributes(status);
    const error = outcome?.error ?? (status >= 500 ? { code: 'http_error', message: `answered ${status}` } : undefined);
    this.firing.end({ error, skipped: outcome?.skipped, attributes });
    this.cleanup?.();
  }
}
