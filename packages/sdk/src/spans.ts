import { randomFillSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/** The sampled W3C trace context of an incoming call: version 00, ids, flags with bit 0 set. */
const SAMPLED_TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span under way: its context (the traceparent the handler's own calls carry) and where it started. */
export interface OpenSpan {
  traceparent: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  functionId: string;
  startNanos: string;
}

export interface SpanSink {
  /** Sends one `OTLP` telemetry frame; false when it could not be sent (not connected). */
  sendTelemetry(frame: Buffer): boolean;
}

/** Spans held for the next frame at most, and the longest wait before a frame goes. */
const MAX_BATCH = 256;
const FLUSH_MS = 200;
/** A send that found no connection is tried again after this long. */
const RETRY_MS = 1000;
/** Spans waiting while not connected at most; more are dropped. */
const MAX_HELD = 2048;

/**
 * The worker's spans: one per handled invocation whose caller's trace is sampled, a child of the
 * engine's span for the call, named `handle <function>`. They are sent to the engine in batches as
 * OTLP/JSON telemetry frames (`OTLP` + JSON) on the worker's connection, where they join the engine's
 * own spans (the span store, the OTLP export). Unsampled calls cost a regular-expression test.
 */
export class SpanRecorder {
  private batch: unknown[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly ids = Buffer.alloc(8 * 128);
  private idOffset = this.ids.length;
  private readonly resource: unknown;
  dropped = 0;

  constructor(
    private readonly sink: SpanSink,
    serviceName: string,
    workerName: string,
    sdkVersion: string,
  ) {
    this.resource = {
      attributes: [
        { key: 'service.name', value: { stringValue: serviceName } },
        { key: 'service.instance.id', value: { stringValue: workerName } },
        { key: 'telemetry.sdk.name', value: { stringValue: '@flint/sdk' } },
        { key: 'telemetry.sdk.language', value: { stringValue: 'nodejs' } },
        { key: 'telemetry.sdk.version', value: { stringValue: sdkVersion } },
      ],
    };
  }

  /** Opens a span under `traceparent` when it is a sampled W3C context; undefined otherwise. */
  open(traceparent: string | undefined, functionId: string): OpenSpan | undefined {
    if (traceparent === undefined) return undefined;
    const m = SAMPLED_TRACEPARENT.exec(traceparent);
    if (!m || (Number.parseInt(m[3] as string, 16) & 1) === 0) return undefined;
    const traceId = m[1] as string;
    const spanId = this.newSpanId();
    return {
      traceparent: `00-${traceId}-${spanId}-01`,
      traceId,
      spanId,
      parentSpanId: m[2] as string,
      name: `handle ${functionId}`,
      functionId,
      startNanos: nowNanos(),
    };
  }

  /** Ends a span: ok, or with the error the handler failed with. */
  close(span: OpenSpan, error?: { code?: string; message?: string }): void {
    const attributes = [{ key: 'function_id', value: { stringValue: span.functionId } }];
    const otlp: Record<string, unknown> = {
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      name: span.name,
      kind: 2, // SERVER: the worker serves the engine's call
      startTimeUnixNano: span.startNanos,
      endTimeUnixNano: nowNanos(),
      attributes,
      status: error ? { code: 2, message: `${error.code ?? 'error'}: ${error.message ?? ''}` } : { code: 1 },
    };
    if (error?.code) attributes.push({ key: 'error.type', value: { stringValue: error.code } });
    if (this.batch.length >= MAX_HELD) {
      this.dropped++;
      return;
    }
    this.batch.push(otlp);
    if (this.batch.length >= MAX_BATCH) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Sends the spans held; they stay held (up to a cap) while the worker is not connected. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.batch.length === 0) return;
    const request = { resourceSpans: [{ resource: this.resource, scopeSpans: [{ scope: { name: '@flint/sdk' }, spans: this.batch }] }] };
    const frame = Buffer.from(`OTLP${JSON.stringify(request)}`, 'utf8');
    if (this.sink.sendTelemetry(frame)) this.batch = [];
    else {
      // Not connected: try again a little later (the spans stay held, up to MAX_HELD).
      this.timer = setTimeout(() => this.flush(), RETRY_MS);
      this.timer.unref();
    }
  }

  private newSpanId(): string {
    if (this.idOffset >= this.ids.length) {
      randomFillSync(this.ids);
      this.idOffset = 0;
    }
    const id = this.ids.toString('hex', this.idOffset, this.idOffset + 8);
    this.idOffset += 8;
    return id === '0000000000000000' ? this.newSpanId() : id;
  }
}

/** Nanoseconds since the epoch as a decimal string (OTLP/JSON's form of a 64-bit time). */
function nowNanos(): string {
  return String(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}
